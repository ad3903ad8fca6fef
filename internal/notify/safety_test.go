package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/internal/notify"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

func TestNotifier_refuses_to_follow_a_redirect(t *testing.T) {
	target := newReceiver(t, http.StatusOK)
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/elsewhere", status))
		defer redirect.Close()
		err := notifier(t, redirect.URL, testSecret, 0).Run(context.Background(),
			noteCreated(t, "ev-redirect", map[string]string{"noteId": "n-1", "title": "T"}), "note-notifier#ev-redirect")
		if err == nil || !idempotency.IsPermanent(err) {
			t.Errorf("answer %d: error %v; want a permanent refusal", status, err)
		}
	}
	if got := target.Calls(); len(got) != 0 {
		t.Fatalf("the redirect target got %d calls, with the note and its key; want none", len(got))
	}
}

// secretURL is a webhook URL whose path holds a token, as many webhook URLs do.
func secretURL(base string) string { return base + "/hooks/T0KEN-s3cr3t" }

func TestNotifier_errors_never_contain_the_URL(t *testing.T) {
	closed := func() string { // a loopback port nobody listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "http://" + l.Addr().String()
	}()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(300 * time.Millisecond) }))
	defer slow.Close()
	refusing := newReceiver(t, http.StatusForbidden)
	redirect := httptest.NewServer(http.RedirectHandler(refusing.URL, http.StatusFound))
	defer redirect.Close()
	tests := []struct {
		name string
		base string
	}{
		{"connection refused", closed},
		{"timeout", slow.URL},
		{"refused with 403", refusing.URL},
		{"redirect", redirect.URL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := secretURL(tt.base)
			err := notifier(t, url, testSecret, 100*time.Millisecond).Run(context.Background(),
				noteCreated(t, "ev-leak", map[string]string{"noteId": "n-1", "title": "T"}), "note-notifier#ev-leak")
			if err == nil {
				t.Fatal("no error")
			}
			host := strings.TrimPrefix(tt.base, "http://")
			for _, secret := range []string{url, host, "T0KEN-s3cr3t"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q contains %q", err, secret)
				}
			}
		})
	}
}

func TestNew_requires_https_except_to_a_loopback_host_and_a_long_secret(t *testing.T) {
	tests := []struct {
		url, secret string
		ok          bool
	}{
		{"https://hooks.example.com/T0KEN", testSecret, true},
		{"http://127.0.0.1:8080/hook", testSecret, true},
		{"http://[::1]:8080/hook", testSecret, true},
		{"http://localhost/hook", testSecret, true},
		{"http://hooks.example.com/T0KEN", testSecret, false},
		{"http://10.0.0.1/T0KEN", testSecret, false},
		{"ftp://hooks.example.com/T0KEN", testSecret, false},
		{"https://hooks.example.com/T0KEN", testSecret[:notify.MinSecretLength-1], false},
	}
	for _, tt := range tests {
		_, err := notify.New(notify.Config{URL: tt.url, Secret: tt.secret})
		if (err == nil) != tt.ok {
			t.Errorf("New(%s, %d-byte secret) = %v; want ok %v", tt.url, len(tt.secret), err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), "T0KEN") {
			t.Errorf("error %q quotes the URL", err)
		}
	}
}

// A receiver checks a call by recomputing the documented string: the notifier signs
// timestamp + "." + Idempotency-Key + "." + body with HMAC-SHA256, at the time its clock gives.
func TestNotifier_signs_the_timestamp_the_Idempotency_Key_and_the_exact_body(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	clock := time.Unix(1_800_000_000, 0)
	n, err := notify.New(notify.Config{URL: r.URL, Secret: r.Secret, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	_ = n.Run(context.Background(), noteCreated(t, "ev-signed", map[string]string{"noteId": "n-1", "title": "T"}), "k")
	c := r.Calls()
	if len(c) != 1 {
		t.Fatalf("calls = %+v; want one", c)
	}
	mac := hmac.New(sha256.New, []byte(r.Secret))
	mac.Write([]byte("1800000000." + notify.IdempotencyKey("k") + "." + string(c[0].Body)))
	if got, want := c[0].Header.Get("Webhook-Signature"), "v2="+hex.EncodeToString(mac.Sum(nil)); got != want || c[0].Header.Get("Webhook-Timestamp") != "1800000000" {
		t.Errorf("signature %s at %s; want %s at 1800000000", got, c[0].Header.Get("Webhook-Timestamp"), want)
	}
	// The receiver refuses the call: its timestamp is far from now.
	if c[0].Status != http.StatusUnauthorized {
		t.Errorf("a call signed at a stale time answered %d; want 401", c[0].Status)
	}
}
