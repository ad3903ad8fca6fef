package config_test

import (
	"fmt"

	"github.com/onceflow/onceflow/internal/config"
)

func ExampleLoadRelay() {
	env := map[string]string{
		"NOTES_QUEUE_URL":         "https://sqs.eu-west-1.amazonaws.com/123456789012/notes.fifo",
		"LEDGER_QUEUE_URL":        "https://sqs.eu-west-1.amazonaws.com/123456789012/ledger.fifo",
		"NOTIFICATIONS_QUEUE_URL": "https://sqs.eu-west-1.amazonaws.com/123456789012/notifications.fifo",
		"OUTBOX_PARK_QUEUE_URL":   "https://sqs.eu-west-1.amazonaws.com/123456789012/outbox-parked.fifo",
	}
	cfg, err := config.LoadRelay(func(k string) string { return env[k] })
	fmt.Println(err, cfg.Routes["note.created"])
	// Output: <nil> [https://sqs.eu-west-1.amazonaws.com/123456789012/notes.fifo https://sqs.eu-west-1.amazonaws.com/123456789012/notifications.fifo]
}
