package testkit

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// Consumer is sqsbatch.NewConsumer for a test: it records what the engine counted (Applied,
// Duplicate, Conflict, ...) and what it dead-lettered, and logs to the test's output.
// StreamConsumer is its stream ports' twin.
type Consumer struct {
	tb  testing.TB
	p   *sqsbatch.Processor
	rec *recorder
}

// NewConsumer builds the consumer of handler on db as sqsbatch.NewConsumer does, for a test.
// What consumer leaves zero is set for one: Name "test", Table a new idempotency table
// (IdempotencyTable), and the in-memory cache OFF (CacheSize -1) unless CacheSize asks for one,
// so that every redelivery reaches DynamoDB's condition. cfg.DeadLetter defaults to a recorder
// (DeadLetters); consumer.Logger to the test's output. consumer.Metrics still receives
// everything.
func NewConsumer(tb testing.TB, db *dynamodb.Client, handler idempotency.Handler, consumer idempotency.Config, cfg sqsbatch.Config) *Consumer {
	tb.Helper()
	c := &Consumer{tb: tb, rec: newRecorder(tb, db, &consumer, &cfg.DeadLetter)}
	p, err := sqsbatch.NewConsumer(db, handler, consumer, cfg)
	if err != nil {
		tb.Fatalf("new consumer: %v", err)
	}
	c.p = p
	return c
}

// Receive hands the consumer one batch, as Lambda does, and returns the ids of the messages it
// reported failed (SQS would deliver them again).
func (c *Consumer) Receive(batch events.SQSEvent) (failed []string) {
	c.tb.Helper()
	resp, err := c.p.Handle(context.Background(), batch)
	if err != nil {
		c.tb.Fatalf("Handle returned an error: %v", err)
	}
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

// Count returns the total the engine counted under a metrics name (metrics.Applied,
// metrics.Duplicate, metrics.Conflict, metrics.Rejected, metrics.Malformed, metrics.Ignored, ...).
func (c *Consumer) Count(name string) float64 { return c.rec.total(name) }

// DeadLetters returns what the consumer dead-lettered so far (when cfg.DeadLetter was nil).
func (c *Consumer) DeadLetters() []DeadLetter { return c.rec.deadLetters() }

// Processor is the sqsbatch.Processor under test.
func (c *Consumer) Processor() *sqsbatch.Processor { return c.p }
