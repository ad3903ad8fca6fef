package workload

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// Under chaos the API answers a read 5xx when its DynamoDB calls keep failing: the workload's
// verification reads are retried as a client would (they read, nothing is written), and
// writes are never retried by the transport.
func TestRetryReads_a_read_answered_5xx_is_retried_a_write_is_not(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	client := &http.Client{Transport: retryReads{next: http.DefaultTransport}}
	cases := []struct {
		name, method string
		want         int
		calls        int64
	}{
		{"a GET answered 500 twice gets the third answer", http.MethodGet, http.StatusOK, 3},
		{"a POST answered 500 is answered 500", http.MethodPost, http.StatusInternalServerError, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls.Store(0)
			req, _ := http.NewRequest(tc.method, srv.URL, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want || calls.Load() != tc.calls {
				t.Errorf("status %d after %d calls, want %d after %d", resp.StatusCode, calls.Load(), tc.want, tc.calls)
			}
		})
	}
}

// A read's attempt that is not answered within its bound is made again: a bound on the whole
// read (the owner's client had a 30 s Timeout) ran out under load on one or two slow answers,
// and the chaos run's check of every movement's status failed with "Client.Timeout exceeded".
func TestRetryReads_an_attempt_past_its_bound_is_made_again(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			<-r.Context().Done() // the first attempt is never answered
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	client := &http.Client{Transport: retryReads{next: http.DefaultTransport, attempt: 200 * time.Millisecond}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatalf("after %d calls: %v", calls.Load(), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 2 {
		t.Errorf("status %d after %d calls; want 200 after 2", resp.StatusCode, calls.Load())
	}
}
