package app

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/onceflow/onceflow/internal/api"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/internal/notes"
	"github.com/onceflow/onceflow/internal/notify"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// Namespace is the CloudWatch metrics namespace of every function.
const Namespace = "onceflow"

// NewAPI returns the api function's handler.
func NewAPI(cfg config.API, db api.DB, logger *slog.Logger) (*api.Handler, error) {
	return api.New(api.Config{DB: db, Table: cfg.AppTable, Logger: logger})
}

// NewRelay returns the outbox-relay function's handler.
func NewRelay(cfg config.Relay, client publish.Sender, logger *slog.Logger, m *metrics.Recorder) (*outbox.Relay, error) {
	p, err := publish.New(client, publish.Config{})
	if err != nil {
		return nil, err
	}
	return outbox.NewRelay(outbox.RelayConfig{Sender: p, Routes: cfg.Routes, Logger: logger, Metrics: m})
}

// NewNoteTagger returns the note-tagger function's handler.
func NewNoteTagger(cfg config.Consumer, db idempotency.DB, client deadletter.SendMessageAPI, logger *slog.Logger, m *metrics.Recorder) (*sqsbatch.Processor, error) {
	return NewConsumer(cfg, notes.Tagger(cfg.AppTable), db, client, logger, m)
}

// NewLedger returns the ledger function's handler.
func NewLedger(cfg config.Consumer, db idempotency.DB, client deadletter.SendMessageAPI, logger *slog.Logger, m *metrics.Recorder) (*sqsbatch.Processor, error) {
	return NewConsumer(cfg, ledger.Handler(cfg.AppTable), db, client, logger, m)
}

// NewConsumer returns an SQS batch handler that applies h's effects exactly once and moves
// malformed messages to the configured dead-letter queue.
func NewConsumer(cfg config.Consumer, h idempotency.Handler, db idempotency.DB, client deadletter.SendMessageAPI, logger *slog.Logger, m *metrics.Recorder) (*sqsbatch.Processor, error) {
	c, err := idempotency.New(db, h, idempotency.Config{Name: cfg.Name, Table: cfg.IdempotencyTable,
		Retention: cfg.Retention, Logger: logger, Metrics: m})
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	return sqsbatch.New(c, sqsbatch.Config{DeadLetter: deadletter.New(client, cfg.DeadLetterQueueURL), Logger: logger, Metrics: m})
}

// NewNoteNotifier returns the note-notifier function's handler: a LeasedConsumer whose side
// effect POSTs each note.created event to cfg.WebhookURL with its Idempotency-Key, and which
// moves malformed and permanently refused messages to the configured dead-letter queue.
func NewNoteNotifier(cfg config.Notifier, db idempotency.DB, client deadletter.SendMessageAPI, logger *slog.Logger, m *metrics.Recorder) (*sqsbatch.Processor, error) {
	hook, err := notify.New(notify.Config{URL: cfg.WebhookURL})
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	c, err := idempotency.NewLeased(db, hook, idempotency.LeaseConfig{Config: idempotency.Config{Name: cfg.Name,
		Table: cfg.IdempotencyTable, Retention: cfg.Retention, Logger: logger, Metrics: m}})
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", cfg.Name, err)
	}
	// A message starts only while one webhook call and its claim and completion still fit in
	// the invocation, so a slow receiver never times the whole batch out.
	return sqsbatch.New(c, sqsbatch.Config{DeadlineMargin: notify.DefaultTimeout + 3*time.Second,
		DeadLetter: deadletter.New(client, cfg.DeadLetterQueueURL), Logger: logger, Metrics: m})
}
