package testkit

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// Consumer is sqsbatch.NewConsumer for a test: it records what the engine counted (Applied,
// Duplicate, Conflict, ...) and what it dead-lettered, and logs to the test's output.
type Consumer struct {
	tb    testing.TB
	p     *sqsbatch.Processor
	mu    sync.Mutex
	count map[string]float64
	dead  []DeadLetter
}

// DeadLetter is a message the consumer dead-lettered, with the reason.
type DeadLetter struct {
	Message events.SQSMessage
	Reason  error
}

// NewConsumer builds the consumer of handler on db as sqsbatch.NewConsumer does, for a test.
// What consumer leaves zero is set for one: Name "test", Table a new idempotency table
// (IdempotencyTable), and the in-memory cache OFF (CacheSize -1) unless CacheSize asks for one,
// so that every redelivery reaches DynamoDB's condition. cfg.DeadLetter defaults to a recorder
// (DeadLetters); consumer.Logger to the test's output. consumer.Metrics still receives
// everything.
func NewConsumer(tb testing.TB, db *dynamodb.Client, handler idempotency.Handler, consumer idempotency.Config, cfg sqsbatch.Config) *Consumer {
	tb.Helper()
	c := &Consumer{tb: tb, count: map[string]float64{}}
	if consumer.Name == "" {
		consumer.Name = "test"
	}
	if consumer.Table == "" {
		consumer.Table = IdempotencyTable(tb, db)
	}
	if consumer.CacheSize == 0 {
		consumer.CacheSize = -1
	}
	if consumer.Logger == nil {
		consumer.Logger = slog.New(slog.NewTextHandler(tb.Output(), nil))
	}
	if cfg.DeadLetter == nil {
		cfg.DeadLetter = batch.DeadLettererFunc(func(_ context.Context, m events.SQSMessage, reason error) error {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.dead = append(c.dead, DeadLetter{Message: m, Reason: reason})
			return nil
		})
	}
	consumer.Metrics = tee{c, consumer.Metrics}
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
// metrics.Duplicate, metrics.Conflict, metrics.Rejected, metrics.Malformed, ...).
func (c *Consumer) Count(name string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count[name]
}

// DeadLetters returns what the consumer dead-lettered so far (when cfg.DeadLetter was nil).
func (c *Consumer) DeadLetters() []DeadLetter {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]DeadLetter(nil), c.dead...)
}

// Processor is the sqsbatch.Processor under test.
func (c *Consumer) Processor() *sqsbatch.Processor { return c.p }

func (c *Consumer) add(name string, n float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.count[name] += n
}

// tee counts into the Consumer and passes everything on to the user's recorder.
type tee struct {
	c    *Consumer
	next metrics.Recorder
}

func (t tee) Count(name string, n float64) {
	t.c.add(name, n)
	if t.next != nil {
		t.next.Count(name, n)
	}
}

func (t tee) Observe(name string, d time.Duration) {
	if t.next != nil {
		t.next.Observe(name, d)
	}
}

// Flush flushes the user's recorder when it buffers.
func (t tee) Flush() error {
	if t.next == nil {
		return nil
	}
	return metrics.Flush(t.next)
}
