package webhooktest_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/internal/webhooktest"
)

func post(t *testing.T, url, key, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/hook", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestReceiver_records_every_call_with_the_status_it_answered(t *testing.T) {
	r := webhooktest.Start(t)
	if !strings.HasPrefix(r.URL, "http://127.0.0.1:") {
		t.Errorf("URL = %s; want loopback", r.URL)
	}

	answers := []int{post(t, r.URL, "k1", `{"n":1}`)}
	r.Answer(http.StatusServiceUnavailable)
	answers = append(answers, post(t, r.URL, "k2", `{"n":2}`))
	r.Respond(func(c webhooktest.Call) int {
		if c.Key() == "k3" {
			return http.StatusNoContent
		}
		return http.StatusBadRequest
	})
	answers = append(answers, post(t, r.URL, "k3", `{"n":3}`), post(t, r.URL, "k4", ""))

	want := []struct {
		key, body string
		status    int
	}{{"k1", `{"n":1}`, 200}, {"k2", `{"n":2}`, 503}, {"k3", `{"n":3}`, 204}, {"k4", "", 400}}
	calls := r.Calls()
	if len(calls) != len(want) || len(answers) != len(want) {
		t.Fatalf("calls = %+v; want %d", calls, len(want))
	}
	for i, w := range want {
		c := calls[i]
		if c.Method != http.MethodPost || c.Key() != w.key || string(c.Body) != w.body || c.Status != w.status || answers[i] != w.status {
			t.Errorf("call %d = %s %s %q recorded as %d, answered %d; want POST %s %q answered %d",
				i, c.Method, c.Key(), c.Body, c.Status, answers[i], w.key, w.body, w.status)
		}
	}
	if got := r.Keys(); !slices.Equal(got, []string{"k1", "k2", "k3", "k4"}) {
		t.Errorf("keys = %v; want k1 to k4 in order", got)
	}
}
