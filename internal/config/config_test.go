package config_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/internal/config"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConsumer_applies_defaults_and_reads_every_variable(t *testing.T) {
	c, err := config.LoadConsumer(env(map[string]string{
		"CONSUMER_NAME": "ledger", "APP_TABLE": "app", "IDEMPOTENCY_TABLE": "idem",
		"DEAD_LETTER_QUEUE_URL": "https://q/dlq.fifo", "RETENTION_DAYS": "3", "MAX_RECEIVE_COUNT": "50",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "ledger" || c.Retention != 72*time.Hour || c.LogLevel != "info" || c.DeadLetterQueueURL == "" || c.MaxReceiveCount != 50 {
		t.Fatalf("config = %+v", c)
	}
}

func TestLoad_names_every_problem_at_once(t *testing.T) {
	tests := []struct {
		name string
		load func(func(string) string) error
		env  map[string]string
		want []string
	}{
		{"api", func(g func(string) string) error { _, err := config.LoadAPI(g); return err },
			map[string]string{"LOG_LEVEL": "loud"}, []string{"APP_TABLE", "LOG_LEVEL"}},
		{"relay", func(g func(string) string) error { _, err := config.LoadRelay(g); return err },
			nil, []string{"NOTES_QUEUE_URL", "LEDGER_QUEUE_URL", "NOTIFICATIONS_QUEUE_URL", "OUTBOX_PARK_QUEUE_URL"}},
		{"consumer", func(g func(string) string) error { _, err := config.LoadConsumer(g); return err },
			map[string]string{"RETENTION_DAYS": "0", "MAX_RECEIVE_COUNT": "-1"},
			[]string{"CONSUMER_NAME", "APP_TABLE", "IDEMPOTENCY_TABLE", "DEAD_LETTER_QUEUE_URL", "RETENTION_DAYS", "MAX_RECEIVE_COUNT"}},
		{"notifier", func(g func(string) string) error { _, err := config.LoadNotifier(g); return err },
			map[string]string{"RETENTION_DAYS": "two", "LOG_LEVEL": "loud"},
			[]string{"IDEMPOTENCY_TABLE", "WEBHOOK_URL_PARAMETER", "WEBHOOK_SECRET_PARAMETER", "DEAD_LETTER_QUEUE_URL", "RETENTION_DAYS", "LOG_LEVEL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.load(env(tt.env))
			if err == nil {
				t.Fatal("no error; want one per problem")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

func TestLoadRelay_routes_each_event_type_to_its_queues(t *testing.T) {
	c, err := config.LoadRelay(env(map[string]string{"NOTES_QUEUE_URL": "n", "LEDGER_QUEUE_URL": "l", "NOTIFICATIONS_QUEUE_URL": "nn", "OUTBOX_PARK_QUEUE_URL": "p"}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"note.created": {"n", "nn"}, "account.credited": {"l"}, "account.debited": {"l"}}
	for typ, urls := range want {
		if got := c.Routes[typ]; !slices.Equal(got, urls) {
			t.Errorf("route %s = %v; want %v", typ, got, urls)
		}
	}
}

func TestLoadRelay_reads_every_route_from_OUTBOX_ROUTES_alone_when_set(t *testing.T) {
	c, err := config.LoadRelay(env(map[string]string{"NOTES_QUEUE_URL": "old", "OUTBOX_PARK_QUEUE_URL": "p",
		"OUTBOX_ROUTES": "note.created=n, note.created=w,account.credited=l"}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"note.created": {"n", "w"}, "account.credited": {"l"}}
	if !maps.EqualFunc(c.Routes, want, slices.Equal) {
		t.Errorf("routes = %v; want %v (OUTBOX_ROUTES only)", c.Routes, want)
	}
	for _, bad := range []string{"note.created", "=q", "note.created=", "a=q,a=q"} {
		if _, err := config.LoadRelay(env(map[string]string{"OUTBOX_PARK_QUEUE_URL": "p", "OUTBOX_ROUTES": bad})); err == nil ||
			!strings.Contains(err.Error(), "OUTBOX_ROUTES") {
			t.Errorf("OUTBOX_ROUTES=%q: error %v; want one naming OUTBOX_ROUTES", bad, err)
		}
	}
}

func TestLoadNotifier_applies_defaults_and_reads_every_variable(t *testing.T) {
	c, err := config.LoadNotifier(env(map[string]string{
		"IDEMPOTENCY_TABLE": "idem", "WEBHOOK_URL_PARAMETER": "/onceflow/webhook/url",
		"WEBHOOK_SECRET_PARAMETER": "/onceflow/webhook/signing-secret", "DEAD_LETTER_QUEUE_URL": "https://q/dlq.fifo",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := config.Notifier{Common: config.Common{LogLevel: "info"}, Name: "note-notifier", IdempotencyTable: "idem",
		DeadLetterQueueURL: "https://q/dlq.fifo", Retention: config.DefaultRetention,
		WebhookURLParameter: "/onceflow/webhook/url", WebhookSecretParameter: "/onceflow/webhook/signing-secret"}
	if c != want {
		t.Fatalf("config = %+v\nwant     %+v", c, want)
	}
	c, err = config.LoadNotifier(env(map[string]string{
		"CONSUMER_NAME": "notifier-b", "IDEMPOTENCY_TABLE": "idem", "WEBHOOK_URL_PARAMETER": "/u", "WEBHOOK_SECRET_PARAMETER": "/s",
		"DEAD_LETTER_QUEUE_URL": "d", "RETENTION_DAYS": "2", "LOG_LEVEL": "debug",
	}))
	if err != nil || c.Name != "notifier-b" || c.Retention != 48*time.Hour || c.LogLevel != "debug" {
		t.Fatalf("config = %+v, %v; want name notifier-b, 2 days, debug", c, err)
	}
}

func TestLoadNotifier_takes_parameter_names_not_values(t *testing.T) {
	for _, v := range []string{"", "https://hooks.example.com/notes", "webhook-url"} {
		for _, name := range []string{"WEBHOOK_URL_PARAMETER", "WEBHOOK_SECRET_PARAMETER"} {
			vars := map[string]string{"IDEMPOTENCY_TABLE": "i", "DEAD_LETTER_QUEUE_URL": "d",
				"WEBHOOK_URL_PARAMETER": "/u", "WEBHOOK_SECRET_PARAMETER": "/s"}
			vars[name] = v
			_, err := config.LoadNotifier(env(vars))
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%q: error %v; want one naming %s", name, v, err, name)
			}
		}
	}
}
