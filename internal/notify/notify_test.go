package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/internal/notify"
	"github.com/onceflow/onceflow/internal/webhooktest"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// call is what the webhook receiver saw of one request.
type call struct {
	method, contentType, key string
	body                     notify.Notification
}

// newReceiver starts a webhook receiver that answers status to every call.
func newReceiver(t *testing.T, status int) *webhooktest.Receiver {
	r := webhooktest.Start(t)
	r.Answer(status)
	return r
}

// calls returns what r saw of every call so far, in order.
func calls(r *webhooktest.Receiver) []call {
	var out []call
	for _, c := range r.Calls() {
		got := call{method: c.Method, contentType: c.Header.Get("Content-Type"), key: c.Key()}
		_ = json.Unmarshal(c.Body, &got.body)
		out = append(out, got)
	}
	return out
}

var at = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func noteCreated(t *testing.T, id string, data any) cloudevent.Event {
	t.Helper()
	ev, err := cloudevent.New(id, "onceflow/api", notify.NoteCreated, "note-1", at, data)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// testSecret signs calls to servers that do not check signatures.
var testSecret = strings.Repeat("s", notify.MinSecretLength)

func notifier(t *testing.T, url, secret string, timeout time.Duration) *notify.Notifier {
	t.Helper()
	n, err := notify.New(notify.Config{URL: url, Secret: secret, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNotifier_posts_the_notification_with_the_derived_idempotency_key(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, http.StatusAccepted)
	ev := noteCreated(t, "note-created-1", map[string]string{"noteId": "1", "title": "Hello", "content": "long text"})

	if err := notifier(t, r.URL, r.Secret, 0).Run(context.Background(), ev, "note-notifier#note-created-1"); err != nil {
		t.Fatalf("Run = %v", err)
	}
	want := call{method: http.MethodPost, contentType: "application/json",
		key:  notify.IdempotencyKey("note-notifier#note-created-1"),
		body: notify.Notification{Type: "note.created", EventID: "note-created-1", NoteID: "1", Title: "Hello", OccurredAt: at}}
	if got := calls(r); len(got) != 1 || got[0] != want {
		t.Errorf("calls = %+v\nwant [%+v]", got, want)
	}
	if c := r.Calls(); len(c) != 1 || c[0].SignatureError != "" {
		t.Errorf("calls = %+v; want one, validly signed", c)
	}
}

func TestIdempotencyKey_is_stable_distinct_and_header_safe(t *testing.T) {
	t.Parallel()
	a, b := notify.IdempotencyKey("note-notifier#e1"), notify.IdempotencyKey("note-notifier#e2")
	if a != notify.IdempotencyKey("note-notifier#e1") || a == b || len(a) != 64 {
		t.Errorf("keys %q, %q; want stable, distinct, 64 hex characters", a, b)
	}
}

func TestNotifier_classifies_the_webhook_answer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status    int
		wantErr   bool
		permanent bool
	}{
		{http.StatusOK, false, false},
		{http.StatusNoContent, false, false},
		{http.StatusBadRequest, true, true},
		{http.StatusNotFound, true, true},
		{http.StatusConflict, true, true},
		{http.StatusRequestTimeout, true, false},
		{http.StatusTooManyRequests, true, false},
		{http.StatusInternalServerError, true, false},
		{http.StatusServiceUnavailable, true, false},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			r := newReceiver(t, tt.status)
			err := notifier(t, r.URL, r.Secret, 0).Run(context.Background(), noteCreated(t, "e1", map[string]string{"noteId": "1"}), "k")
			if (err != nil) != tt.wantErr || permanent(err) != tt.permanent {
				t.Errorf("Run = %v (permanent %v); want error %v, permanent %v", err, permanent(err), tt.wantErr, tt.permanent)
			}
		})
	}
}

func TestNotifier_times_out_as_a_transient_error(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, http.StatusOK)
	r.Respond(func(webhooktest.Call) int {
		time.Sleep(time.Second)
		return http.StatusOK
	})
	err := notifier(t, r.URL, r.Secret, 100*time.Millisecond).Run(context.Background(), noteCreated(t, "e1", map[string]string{"noteId": "1"}), "k")
	if !errors.Is(err, context.DeadlineExceeded) || permanent(err) {
		t.Errorf("Run = %v; want a deadline error, not permanent", err)
	}
}

func TestNotifier_refuses_malformed_events_without_calling(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, http.StatusOK)
	other, _ := cloudevent.New("e1", "s", "account.credited", "a", at, map[string]any{"accountId": "a", "amount": 1})
	tests := []struct {
		name string
		ev   cloudevent.Event
	}{
		{"other type", other},
		{"no note id", noteCreated(t, "e2", map[string]string{"title": "x"})},
		{"data not an object", noteCreated(t, "e3", []int{1})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := notifier(t, r.URL, r.Secret, 0).Run(context.Background(), tt.ev, "k")
			if !errors.Is(err, cloudevent.ErrMalformed) || !permanent(err) {
				t.Errorf("Run = %v; want malformed", err)
			}
		})
	}
	if n := len(calls(r)); n != 0 {
		t.Errorf("receiver called %d times, want 0", n)
	}
}

func TestNew_rejects_an_invalid_config(t *testing.T) {
	t.Parallel()
	for _, cfg := range []notify.Config{{}, {URL: "example.com/hook", Secret: testSecret}, {URL: "ftp://example.com", Secret: testSecret},
		{URL: "http://127.0.0.1", Secret: testSecret, Timeout: -1}} {
		if _, err := notify.New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error; want one", cfg)
		}
	}
}

func permanent(err error) bool { return idempotency.IsPermanent(err) }
