package applytest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/lease"
)

// Call is one call the Receiver answered.
type Call struct {
	Key    string // its Idempotency-Key
	Status int    // the status answered
}

// Receiver is a downstream service on loopback, the lease mode's side effect calls it: it
// records every call, and answers 204 unless told otherwise (FailNext), as a service that
// applies each Idempotency-Key's effect once on its first successful call. It is safe for
// concurrent use.
type Receiver struct {
	URL string

	mu    sync.Mutex
	calls []Call
	fail  int // the next calls to answer 500
}

// NewReceiver starts a Receiver, closed when the test ends.
func NewReceiver(t *testing.T) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		status := http.StatusNoContent
		if r.fail > 0 {
			r.fail--
			status = http.StatusInternalServerError
		}
		r.calls = append(r.calls, Call{Key: req.Header.Get("Idempotency-Key"), Status: status})
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// FailNext makes the receiver answer 500 to the next n calls, and 204 after.
func (r *Receiver) FailNext(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = n
}

// Calls returns the calls answered, in order.
func (r *Receiver) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// Keys returns the calls' Idempotency-Keys, in order.
func (r *Receiver) Keys() []string {
	var keys []string
	for _, c := range r.Calls() {
		keys = append(keys, c.Key)
	}
	return keys
}

// Applied returns how many distinct keys had their effect applied: were answered a success.
func (r *Receiver) Applied() int {
	applied := map[string]bool{}
	for _, c := range r.Calls() {
		if c.Status/100 == 2 {
			applied[c.Key] = true
		}
	}
	return len(applied)
}

// Call POSTs the event's id to the receiver with key as its Idempotency-Key.
func (r *Receiver) Call(ctx context.Context, ev cloudevent.Event, key string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, strings.NewReader(`{"id":"`+ev.ID+`"}`))
	if err != nil {
		return err
	}
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return nil
}

// Effect is the receiver's Call as a lease mode's side effect.
func (r *Receiver) Effect() lease.SideEffect { return lease.SideEffectFunc(r.Call) }
