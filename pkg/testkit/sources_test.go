package testkit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/envelope"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The bodies of AWS's own producers, each built twice for one logical event (as a producer's
// retry publishes it: a new EventBridge id, a new SNS MessageId), through the consumer with the
// decoder keyed on the payload: applied once, the retry a duplicate.
func TestBodies_of_a_producers_retry_are_one_event_to_a_consumer_keyed_on_the_payload(t *testing.T) {
	db := testkit.DynamoDB(t)
	for _, tc := range []struct {
		name    string
		decoder sqsbatch.Decoder
		body    func() string
	}{
		{"EventBridge", envelope.EventBridge{Key: []string{"orderId"}}, func() string {
			return testkit.EventBridge("shop.orders", "OrderPlaced", map[string]any{"orderId": "o-1", "total": 10})
		}},
		{"SNS", envelope.SNS{Key: []string{"orderId"}, Type: "OrderPlaced"}, func() string {
			return testkit.SNS("arn:aws:sns:us-east-1:000000000000:orders.fifo", `{"orderId":"o-1","total":10}`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			table := testkit.Table(t, db, "count", "pk")
			c := testkit.NewConsumer(t, db, counting(table), idempotency.Config{}, sqsbatch.Config{Decoder: tc.decoder})
			q := testkit.FIFO("orders")
			first, retry := tc.body(), tc.body()
			if first == retry {
				t.Fatalf("two publishes built one body; want a new transport id each time:\n%s", first)
			}
			for _, body := range []string{first, retry} {
				if failed := c.Receive(testkit.Batch(q.Message("o-1", body))); len(failed) > 0 {
					t.Fatalf("failed %v; dead letters %v", failed, c.DeadLetters())
				}
			}
			if got := n(t, db, table); got != 1 || c.Count(metrics.Applied) != 1 || c.Count(metrics.Duplicate) != 1 {
				t.Errorf("counted %d, applied %v, duplicates %v; want the retry a duplicate", got, c.Count(metrics.Applied), c.Count(metrics.Duplicate))
			}
		})
	}
}

// An S3 notification decodes to the object's event, keyed by the object and its sequencer.
func TestS3_is_a_notification_the_S3_decoder_reads(t *testing.T) {
	m := testkit.FIFO("uploads").Message("b", testkit.S3("uploads", "a/b.csv", "ObjectCreated:Put", 42))
	ev, err := envelope.S3{}.Decode(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Subject != "uploads/a/b.csv" || ev.Type != "ObjectCreated:Put" || !strings.Contains(ev.ID, "a%2Fb.csv") {
		t.Errorf("event %s %s %s; want the object as subject, the event name as type, a key naming the object", ev.ID, ev.Type, ev.Subject)
	}
}

// A redrive as onceflow sends it back: a new message carrying the id the message was first
// sent as, which a second redrive keeps (Resent, a producer's re-send, carries none).
func TestRedriven_carries_the_id_the_message_was_first_sent_as(t *testing.T) {
	q := testkit.FIFO("ledger")
	m := q.Message("acct-1", event(t, "e-1"))
	once := q.Redriven(m)
	twice := q.Redriven(once)
	for name, r := range map[string]events.SQSMessage{"redriven": once, "redriven twice": twice} {
		if r.MessageId == m.MessageId || r.Attributes["MessageGroupId"] != "acct-1" || r.Body != m.Body {
			t.Errorf("%s: %+v; want a new message of the group with the body", name, r)
		}
		if got := r.MessageAttributes[deadletter.AttrOriginalMessageID]; got.StringValue == nil || *got.StringValue != m.MessageId {
			t.Errorf("%s: %s = %+v; want %s", name, deadletter.AttrOriginalMessageID, got, m.MessageId)
		}
	}
	if _, ok := q.Resent(m).MessageAttributes[deadletter.AttrOriginalMessageID]; ok {
		t.Error("a re-send carries an original message id; only a redrive does")
	}
}

// Several messages of one group in one batch, as Lambda hands them from a FIFO queue: applied in
// order, each once.
func TestGroup_is_several_messages_of_one_group_in_order(t *testing.T) {
	db := testkit.DynamoDB(t)
	table := testkit.Table(t, db, "count", "pk")
	c := testkit.NewConsumer(t, db, counting(table), idempotency.Config{}, sqsbatch.Config{})
	msgs := testkit.FIFO("g").Group("g-1", event(t, "a"), event(t, "b"), event(t, "c"))
	if failed := c.Receive(testkit.Batch(msgs...)); len(failed) > 0 {
		t.Fatalf("failed %v", failed)
	}
	if got := n(t, db, table); got != 3 {
		t.Errorf("counted %d; want 3", got)
	}
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Attributes["SequenceNumber"] <= msgs[i-1].Attributes["SequenceNumber"] {
			t.Errorf("sequence numbers %s then %s; want increasing", msgs[i-1].Attributes["SequenceNumber"], msgs[i].Attributes["SequenceNumber"])
		}
	}
}

// Kinesis records through the Kinesis port: a CloudEvent put twice (a producer's retried
// PutRecord: another record, another sequence number) is applied once.
func TestKinesisStream_records_a_retried_put_is_applied_once(t *testing.T) {
	db := testkit.DynamoDB(t)
	table := testkit.Table(t, db, "count", "pk")
	c, err := idempotency.New(db, counting(table), idempotency.Config{Name: "k", Table: testkit.IdempotencyTable(t, db), CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := kinesisbatch.New(c.Engine(), kinesisbatch.Config{Decoder: kinesisbatch.DecoderFunc(kinesisbatch.CloudEventData)})
	if err != nil {
		t.Fatal(err)
	}
	s := testkit.KinesisStream("amounts")
	data := []byte(event(t, "put-1"))
	out, err := p.Handle(context.Background(), testkit.KinesisBatch(s.Record("g", data), s.Record("g", data)))
	if err != nil || len(out.BatchItemFailures) > 0 {
		t.Fatalf("handle: %+v, %v", out, err)
	}
	if got := n(t, db, table); got != 1 {
		t.Errorf("counted %d; want the retried put applied once", got)
	}
}

// DynamoDB stream records through the DynamoDB Streams port: the record's image is the data,
// and the same record delivered again is applied once (its handler may run again: the
// engine's condition answers it).
func TestTableStream_records_carry_the_item_and_apply_once(t *testing.T) {
	db := testkit.DynamoDB(t)
	table := testkit.Table(t, db, "count", "pk")
	var images []json.RawMessage
	h := idempotency.HandlerFunc(func(ctx context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		images = append(images, ev.Data)
		return counting(table).Decide(ctx, ev)
	})
	c, err := idempotency.New(db, h, idempotency.Config{Name: "s", Table: testkit.IdempotencyTable(t, db), CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := dynamodbbatch.New(c.Engine(), dynamodbbatch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	type order struct {
		PK    string `dynamodbav:"pk"`
		Total int    `dynamodbav:"total"`
	}
	s := testkit.TableStream("orders", "pk")
	rec := s.Insert(order{"o-1", 10})
	if rec.Change.Keys["pk"].String() != "o-1" || rec.Change.NewImage["total"].Number() != "10" {
		t.Fatalf("record %+v; want the item's key and image", rec.Change)
	}
	for range 2 {
		out, err := p.Handle(context.Background(), testkit.DynamoDBBatch(rec))
		if err != nil || len(out.BatchItemFailures) > 0 {
			t.Fatalf("handle: %+v, %v", out, err)
		}
	}
	if got := n(t, db, table); got != 1 {
		t.Errorf("counted %d; want the record applied once", got)
	}
	if len(images) == 0 || !strings.Contains(string(images[0]), `"total"`) || !strings.Contains(string(images[0]), `"o-1"`) {
		t.Errorf("the handler's data %s; want the record with the item's image", images)
	}
}
