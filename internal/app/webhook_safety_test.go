package app_test

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/testenv"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The webhook URL is a secret (its path often holds a token): the note-notifier's logs and
// dead-letter reasons must not contain it, however the call fails.
func TestNoteNotifier_never_logs_or_dead_letters_the_webhook_url(t *testing.T) {
	s := newSystem(t)
	closedPort := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "http://" + l.Addr().String()
	}()
	refusing := newWebhook(t)
	refusing.answer(http.StatusForbidden, 0)
	redirect := httptest.NewServer(http.RedirectHandler(s.hook.URL, http.StatusTemporaryRedirect))
	defer redirect.Close()
	tests := []struct {
		name         string
		base         string
		deadLettered bool
	}{
		{"connection refused: retried", closedPort, false},
		{"403: dead-lettered", refusing.URL, true},
		{"redirect: refused and dead-lettered", redirect.URL, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.base + "/hooks/T0KEN-s3cr3t"
			// A queue and a table of its own: each case handles the same sample batch (its message
			// ids), which FIFO's deduplication and the note of a letter sent would take for one
			// delivered again.
			logs, dlq, idem := &bytes.Buffer{}, testkit.CreateFIFOQueue(t, s.sqs, "dlq"), testkit.IdempotencyTable(t, s.db)
			params := testenv.Parameters(t, map[string]string{"/t/url": url, "/t/secret": refusing.Secret})
			n, err := app.NewNoteNotifier(config.Notifier{Name: "note-notifier", IdempotencyTable: idem,
				DeadLetterQueueURL: dlq, Retention: config.DefaultRetention,
				WebhookURLParameter: "/t/url", WebhookSecretParameter: "/t/secret"},
				app.Deps{DynamoDB: s.db, SQS: s.sqs, SSM: params, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := n.Handle(ctx(t), sqsSample(t, "note-notifier-batch.json"))
			if err != nil {
				t.Fatal(err)
			}
			dead := testkit.Drain(t, s.sqs, dlq)
			if got := len(dead) > 0; got != tt.deadLettered || (!tt.deadLettered && len(resp.BatchItemFailures) == 0) {
				t.Fatalf("%d dead letters, %d batch item failures; want dead-lettered %v, else failed for a retry",
					len(dead), len(resp.BatchItemFailures), tt.deadLettered)
			}
			var reasons []string
			for _, m := range dead {
				reasons = append(reasons, aws.ToString(m.MessageAttributes[deadletter.AttrReason].StringValue))
			}
			if tt.deadLettered && strings.Join(reasons, "") == "" {
				t.Fatal("dead letters carry no reason")
			}
			host := strings.TrimPrefix(tt.base, "http://")
			for _, leak := range []string{url, host, "T0KEN-s3cr3t"} {
				if strings.Contains(logs.String(), leak) {
					t.Errorf("logs contain %q:\n%s", leak, logs)
				}
				for _, r := range reasons {
					if strings.Contains(r, leak) {
						t.Errorf("dead-letter reason %q contains %q", r, leak)
					}
				}
			}
			if logs.Len() == 0 {
				t.Error("nothing was logged; the check above proves nothing")
			}
		})
	}
}
