package sqsbatch_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A recorder given only to the consumer is the one the processor counts with and flushes at the
// end of every batch: none of the consumer's metrics may stay unflushed in a warm environment.
func TestNewConsumer_flushes_the_consumers_recorder_when_the_batch_has_none(t *testing.T) {
	var emf bytes.Buffer
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	p, err := sqsbatch.NewConsumer(testkit.DynamoDB(t), idempotency.NewRouter(),
		idempotency.Config{Name: "c", Table: "idempotency", Metrics: metrics.NewEMF(&emf, "ns", nil), Logger: quiet},
		sqsbatch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: "not an event"}}})
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("Handle = %+v, %v; want the malformed message failed (no dead-letter queue configured)", resp, err)
	}
	if !strings.Contains(emf.String(), `"Malformed":1`) {
		t.Fatalf("metrics written %q; want the malformed message counted and flushed", emf.String())
	}
}

// A typed nil *metrics.EMF records nothing, as a nil recorder always did, rather than panicking
// outside the processor's panic recovery.
func TestProcessor_with_a_nil_EMF_recorder_records_nothing(t *testing.T) {
	var r *metrics.EMF
	p, err := sqsbatch.New(sqsbatch.MessageHandlerFunc(func(context.Context, events.SQSMessage) error { return nil }),
		sqsbatch.HandlerConfig{Metrics: r, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1"}}}); err != nil {
		t.Fatal(err)
	}
}
