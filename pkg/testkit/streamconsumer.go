package testkit

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
	"github.com/onceflow/onceflow/pkg/port"
)

// StreamConsumer is a stream port's consumer for a test, as Consumer is the SQS port's: it
// records what the engine counted and dead-lettered, and logs to the test's output. E is the
// port's Lambda event: events.DynamoDBEvent (NewDynamoDBConsumer) or events.KinesisEvent
// (NewKinesisConsumer).
type StreamConsumer[E any] struct {
	tb     testing.TB
	invoke func(ctx context.Context, payload []byte) ([]byte, error) // the port's Processor.Invoke
	again  func(batch E, failed []string) E                          // what Lambda delivers after failed
	rec    *recorder
}

// NewDynamoDBConsumer builds the consumer of handler on db, its events the changes
// dynamodbbatch.New decodes (cfg.Decoder; ChangeEvent's types are dynamodbbatch.Insert, Modify,
// Remove), for a test. What consumer and cfg leave zero is set as NewConsumer sets it.
func NewDynamoDBConsumer(tb testing.TB, db *dynamodb.Client, handler idempotency.Handler, consumer idempotency.Config, cfg dynamodbbatch.Config) *StreamConsumer[events.DynamoDBEvent] {
	tb.Helper()
	rec := newRecorder(tb, db, &consumer, &cfg.DeadLetter)
	p, err := dynamodbbatch.New(engineOf(tb, db, handler, consumer), cfg)
	if err != nil {
		tb.Fatalf("new DynamoDB stream consumer: %v", err)
	}
	return &StreamConsumer[events.DynamoDBEvent]{tb: tb, rec: rec, invoke: p.Invoke, again: func(ev events.DynamoDBEvent, failed []string) events.DynamoDBEvent {
		return DynamoDBBatch(from(ev.Records, func(r events.DynamoDBEventRecord) string { return r.Change.SequenceNumber }, failed)...)
	}}
}

// NewKinesisConsumer builds the consumer of handler on db, its events the records
// kinesisbatch.New decodes (cfg.Decoder; RecordEvent's type is kinesisbatch.RecordType), for a
// test. What consumer and cfg leave zero is set as NewConsumer sets it.
func NewKinesisConsumer(tb testing.TB, db *dynamodb.Client, handler idempotency.Handler, consumer idempotency.Config, cfg kinesisbatch.Config) *StreamConsumer[events.KinesisEvent] {
	tb.Helper()
	rec := newRecorder(tb, db, &consumer, &cfg.DeadLetter)
	p, err := kinesisbatch.New(engineOf(tb, db, handler, consumer), cfg)
	if err != nil {
		tb.Fatalf("new Kinesis consumer: %v", err)
	}
	return &StreamConsumer[events.KinesisEvent]{tb: tb, rec: rec, invoke: p.Invoke, again: func(ev events.KinesisEvent, failed []string) events.KinesisEvent {
		return KinesisBatch(from(ev.Records, func(r events.KinesisEventRecord) string { return r.Kinesis.SequenceNumber }, failed)...)
	}}
}

// from is what Lambda delivers of a shard's batch recs after a response reporting the
// sequence numbers failed: the records from the lowest reported on (its checkpoint), by their
// sequence numbers seq; none when none is reported.
func from[R any](recs []R, seq func(R) string, failed []string) []R {
	i := slices.IndexFunc(recs, func(r R) bool { return slices.Contains(failed, seq(r)) })
	if i < 0 {
		return nil
	}
	return recs[i:]
}

// engineOf is the engine of handler's consumer on db.
func engineOf(tb testing.TB, db *dynamodb.Client, handler idempotency.Handler, consumer idempotency.Config) port.Engine {
	tb.Helper()
	c, err := idempotency.New(db, handler, consumer)
	if err != nil {
		tb.Fatalf("new consumer: %v", err)
	}
	return c.Engine()
}

// Receive hands the consumer one batch of a shard, as JSON as Lambda does, and returns the
// batch Lambda delivers next: the records from the one the response reported on (the shard's
// checkpoint), no records when all were done with. A record delivered again is the same
// record: a batch received twice is a redelivery, as after a crash that lost the first answer.
func (c *StreamConsumer[E]) Receive(batch E) (again E) {
	c.tb.Helper()
	payload, err := json.Marshal(batch)
	if err != nil {
		c.tb.Fatalf("encode the batch: %v", err)
	}
	out, err := c.invoke(context.Background(), payload)
	if err != nil {
		c.tb.Fatalf("Invoke returned an error: %v", err)
	}
	var resp struct {
		BatchItemFailures []struct {
			ItemIdentifier string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		c.tb.Fatalf("decode the response %s: %v", out, err)
	}
	failed := make([]string, 0, len(resp.BatchItemFailures))
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return c.again(batch, failed)
}

// Count returns the total the engine counted under a metrics name (metrics.Applied,
// metrics.Duplicate, metrics.Ignored, metrics.Malformed, ...).
func (c *StreamConsumer[E]) Count(name string) float64 { return c.rec.total(name) }

// DeadLetters returns what the consumer dead-lettered so far (when cfg.DeadLetter was nil),
// each record as its port shapes a letter.
func (c *StreamConsumer[E]) DeadLetters() []DeadLetter { return c.rec.deadLetters() }
