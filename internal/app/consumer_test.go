package app_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/notes"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A consumer's main is app.Start(name, config.LoadConsumer, app.Consumer(handler, policy)):
// built so, the note-tagger's handler applies once across a redelivery, on the tables and the
// dead-letter queue its configuration names.
func TestConsumer_builds_a_consumer_from_its_handler_on_the_configured_tables_and_queue(t *testing.T) {
	s := newSystem(t)
	build := app.Consumer(notes.Tagger, idempotency.GoOn)
	c, err := build(config.Consumer{Name: "note-tagger", AppTable: s.app, IdempotencyTable: s.idem,
		DeadLetterQueueURL: s.notesDLQ, Retention: config.DefaultRetention},
		app.Deps{DynamoDB: s.db, SQS: s.sqs, Logger: slog.New(slog.NewJSONHandler(s.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	batch := sqsSample(t, "note-tagger-batch.json")
	s.seedNotes(t, batch)
	handle(t, c, batch)
	handle(t, c, batch)
	if status, body := s.get(t, "/tags/travel"); status != http.StatusOK || !strings.Contains(body, `"count":1`) {
		t.Errorf("tag travel = %d %s; want count 1 after the batch and its redelivery", status, body)
	}
	handle(t, c, sqsSample(t, "note-tagger-malformed.json"))
	if got := testkit.Drain(t, s.sqs, s.notesDLQ); len(got) != 1 {
		t.Errorf("dead-letter queue holds %d messages; want the malformed one", len(got))
	}
}
