package testkit_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// failing is handler failing the first decision of each event id in fail with its error.
type failing struct {
	handler idempotency.Handler
	mu      sync.Mutex
	fail    map[string]error
}

func (f *failing) Decide(ctx context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
	f.mu.Lock()
	err := f.fail[ev.ID]
	delete(f.fail, ev.ID)
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return f.handler.Decide(ctx, ev)
}

// A DynamoDB stream consumer tested as an SQS one is, on DynamoDB Local's own stream: a
// record that can never succeed is dead-lettered, and its item goes on; a record that fails
// comes back with the rest of the batch from it (Receive's answer), and is applied once; the
// batch delivered again after a crash that lost its answer is answered as duplicates.
func TestNewDynamoDBConsumer_a_stream_is_tested_as_a_queue_is(t *testing.T) {
	db := testkit.DynamoDB(t)
	counts := testkit.Table(t, db, "counts", "pk")
	source, arn := testkit.StreamTable(t, db, "orders")
	for i, pk := range []string{"o1", "o1", "o2", "o3"} {
		_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(source), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "ORDER"},
			"version": &types.AttributeValueMemberN{Value: strconv.Itoa(i)}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	recs := testkit.StreamRecords(t, testkit.Streams(t), arn)
	if len(recs) != 4 || recs[1].EventName != string(events.DynamoDBOperationTypeModify) {
		t.Fatalf("stream records: %d, the second %s; want 4, the second a MODIFY", len(recs), recs[1].EventName)
	}
	handler := &failing{handler: counting(counts), fail: map[string]error{
		recs[0].EventID: idempotency.Permanent(errors.New("o1's insert can never be kept")), // dead-lettered
		recs[2].EventID: errors.New("downstream timed out"),                                 // once: delivered again
	}}
	c := testkit.NewDynamoDBConsumer(t, db, handler, idempotency.Config{}, dynamodbbatch.Config{})

	again := c.Receive(testkit.DynamoDBBatch(recs...))
	if len(again.Records) != 2 || again.Records[0].EventID != recs[2].EventID {
		t.Fatalf("delivered again: %d records; want the 2 from o2's failed insert on", len(again.Records))
	}
	if again := c.Receive(again); len(again.Records) != 0 {
		t.Fatalf("the redelivery reported %s failed", again.Records[0].Change.SequenceNumber)
	}
	c.Receive(testkit.DynamoDBBatch(recs[2:]...)) // a crash after the commit: the answer lost, the batch again
	if got := n(t, db, counts); got != 3 {
		t.Errorf("counted %d changes; want 3 (o1's modify, o2, o3), each once", got)
	}
	if applied, dup := c.Count(metrics.Applied), c.Count(metrics.Duplicate); applied != 3 || dup != 3 {
		t.Errorf("applied %v, duplicates %v; want 3, 3", applied, dup)
	}
	if dead := c.DeadLetters(); len(dead) != 1 || dead[0].Message.MessageId != recs[0].EventID {
		t.Errorf("dead letters: %v; want o1's insert, once", dead)
	}
}

// A Kinesis consumer tested as an SQS one is: a producer's retried put (Resent) is a duplicate
// for a consumer keyed on the payload's CloudEvent id, the batch delivered again after a crash
// is answered as duplicates, and a record that is no CloudEvent is malformed on each delivery (a
// stream, unlike a queue, delivers again what follows a checkpoint) and dead-lettered once: its
// letter's note spares the redelivery a second one.
func TestNewKinesisConsumer_a_stream_is_tested_as_a_queue_is(t *testing.T) {
	db := testkit.DynamoDB(t)
	counts := testkit.Table(t, db, "counts", "pk")
	c := testkit.NewKinesisConsumer(t, db, counting(counts), idempotency.Config{},
		kinesisbatch.Config{Decoder: kinesisbatch.DecoderFunc(kinesisbatch.CloudEventData)})
	stream := testkit.KinesisStream("orders")
	placed := stream.Record("o1", []byte(event(t, "placed-1")))
	bad := stream.Record("o2", []byte("not an event"))

	batch := testkit.KinesisBatch(placed, stream.Resent(placed), bad)
	if again := c.Receive(batch); len(again.Records) != 0 {
		t.Fatalf("reported %s failed", again.Records[0].Kinesis.SequenceNumber)
	}
	c.Receive(batch) // a crash after the commit: the answer lost, the batch again
	if got := n(t, db, counts); got != 1 {
		t.Errorf("counted %d; want 1", got)
	}
	if dup := c.Count(metrics.Duplicate); dup != 3 {
		t.Errorf("duplicates: %v; want 3 (the retried put, then both puts again)", dup)
	}
	if dead := c.DeadLetters(); len(dead) != 1 || dead[0].Message.MessageId != bad.EventID || c.Count(metrics.Malformed) != 2 {
		t.Errorf("dead letters: %v, malformed %v; want the record that is no event dead-lettered once, malformed on each of its 2 deliveries",
			dead, c.Count(metrics.Malformed))
	}
}
