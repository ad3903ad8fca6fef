package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/internal/config"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConsumer_applies_defaults_and_reads_every_variable(t *testing.T) {
	c, err := config.LoadConsumer(env(map[string]string{
		"CONSUMER_NAME": "ledger", "APP_TABLE": "app", "IDEMPOTENCY_TABLE": "idem",
		"DEAD_LETTER_QUEUE_URL": "https://q/dlq.fifo", "RETENTION_DAYS": "3",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "ledger" || c.Retention != 72*time.Hour || c.LogLevel != "info" || c.DeadLetterQueueURL == "" {
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
			nil, []string{"NOTES_QUEUE_URL", "LEDGER_QUEUE_URL"}},
		{"consumer", func(g func(string) string) error { _, err := config.LoadConsumer(g); return err },
			map[string]string{"RETENTION_DAYS": "0"},
			[]string{"CONSUMER_NAME", "APP_TABLE", "IDEMPOTENCY_TABLE", "DEAD_LETTER_QUEUE_URL", "RETENTION_DAYS"}},
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
	c, err := config.LoadRelay(env(map[string]string{"NOTES_QUEUE_URL": "n", "LEDGER_QUEUE_URL": "l"}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"note.created": "n", "account.credited": "l", "account.debited": "l"}
	for typ, url := range want {
		if got := c.Routes[typ]; len(got) != 1 || got[0] != url {
			t.Errorf("route %s = %v; want [%s]", typ, got, url)
		}
	}
}
