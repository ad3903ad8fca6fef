package webhooktest_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/internal/notify"
	"github.com/onceflow/onceflow/internal/webhooktest"
)

// post sends body to r signed as the note-notifier signs (notify.Sign), which the receiver
// checks with its own implementation of the documented scheme.
func post(t *testing.T, r *webhooktest.Receiver, key, body string) int {
	t.Helper()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	return postSigned(t, r.URL, key, body, ts, notify.Sign([]byte(r.Secret), ts, key, []byte(body)))
}

func postSigned(t *testing.T, url, key, body, ts, sig string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/hook", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Idempotency-Key", key)
	if ts != "" {
		req.Header.Set(notify.TimestampHeader, ts)
	}
	if sig != "" {
		req.Header.Set(notify.SignatureHeader, sig)
	}
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

	answers := []int{post(t, r, "k1", `{"n":1}`)}
	r.Answer(http.StatusServiceUnavailable)
	answers = append(answers, post(t, r, "k2", `{"n":2}`))
	r.Respond(func(c webhooktest.Call) int {
		if c.Key() == "k3" {
			return http.StatusNoContent
		}
		return http.StatusBadRequest
	})
	answers = append(answers, post(t, r, "k3", `{"n":3}`), post(t, r, "k4", ""))

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

func TestReceiver_answers_401_to_a_call_without_a_valid_signature(t *testing.T) {
	r := webhooktest.Start(t)
	body := `{"n":1}`
	now := strconv.FormatInt(time.Now().Unix(), 10)
	old := strconv.FormatInt(time.Now().Add(-webhooktest.MaxSkew-time.Minute).Unix(), 10)
	// Each call's Idempotency-Key is its case's name.
	sign := func(secret, ts, key, body string) string { return notify.Sign([]byte(secret), ts, key, []byte(body)) }
	v1 := func(ts string) string { // the old scheme: timestamp and body only
		mac := hmac.New(sha256.New, []byte(r.Secret))
		mac.Write([]byte(ts + "." + body))
		return "v1=" + hex.EncodeToString(mac.Sum(nil))
	}
	tests := []struct {
		name    string
		ts, sig string
	}{
		{"no signature", now, ""},
		{"no timestamp", "", sign(r.Secret, now, "no timestamp", body)},
		{"another secret", now, sign(strings.Repeat("x", 64), now, "another secret", body)},
		{"another body", now, sign(r.Secret, now, "another body", `{"n":2}`)},
		{"another timestamp", now, sign(r.Secret, old, "another timestamp", body)},
		{"another key", now, sign(r.Secret, now, "the signed key", body)},
		{"a stale timestamp, correctly signed", old, sign(r.Secret, old, "a stale timestamp, correctly signed", body)},
		{"not v2", now, strings.Replace(sign(r.Secret, now, "not v2", body), "v2=", "v0=", 1)},
		{"v1, correctly signed", now, v1(now)},
		{"a.key.with.dots", now, sign(r.Secret, now, "a.key.with.dots", body)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := postSigned(t, r.URL, tt.name, body, tt.ts, tt.sig); got != http.StatusUnauthorized {
				t.Fatalf("answered %d; want 401", got)
			}
		})
	}
	for _, c := range r.Calls() {
		if c.Status != http.StatusUnauthorized || c.SignatureError == "" {
			t.Errorf("call %s recorded as %d, signature error %q; want 401 with the reason", c.Key(), c.Status, c.SignatureError)
		}
	}
	if got := post(t, r, "good", body); got != http.StatusOK {
		t.Fatalf("a correctly signed call answered %d; want 200", got)
	}
}

// The signature covers the Idempotency-Key: a call replayed with another key (so that the
// receiver would take it for a new notification) is refused.
func TestReceiver_refuses_a_call_whose_Idempotency_Key_was_changed(t *testing.T) {
	r := webhooktest.Start(t)
	body := `{"n":1}`
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	sig := notify.Sign([]byte(r.Secret), ts, "key-signed", []byte(body))
	if got := postSigned(t, r.URL, "key-signed", body, ts, sig); got != http.StatusOK {
		t.Fatalf("the call as signed answered %d; want 200", got)
	}
	if got := postSigned(t, r.URL, "key-changed", body, ts, sig); got != http.StatusUnauthorized {
		t.Fatalf("the same call with another Idempotency-Key answered %d; want 401", got)
	}
}
