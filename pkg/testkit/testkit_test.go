package testkit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

type key struct {
	PK string `dynamodbav:"pk"`
}

// counting adds 1 to the item "n" of table per event: not idempotent on its own.
func counting(table string) idempotency.Handler {
	return idempotency.HandlerFunc(func(context.Context, cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Update(table, key{"n"}, expression.Add(expression.Name("n"), expression.Value(1)))}, nil
	})
}

func event(t *testing.T, id string) string {
	t.Helper()
	b, err := cloudevent.Encode(cloudevent.Event{ID: id, Source: "test", Type: "counted", Subject: "g"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func n(t *testing.T, db *dynamodb.Client, table string) int {
	t.Helper()
	k, _ := attributevalue.MarshalMap(key{"n"})
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ N int }
	_ = attributevalue.UnmarshalMap(out.Item, &v)
	return v.N
}

// The kit's consumer has no cache: with the record deleted behind its back, a redelivery is
// applied again, which only a consumer asking DynamoDB can do. One asking for a cache answers
// from it.
func TestNewConsumer_has_the_cache_off_unless_asked(t *testing.T) {
	db := testkit.DynamoDB(t)
	for _, tc := range []struct {
		cacheSize int
		want      int
	}{{0, 2}, {16, 1}} {
		t.Run(fmt.Sprint("CacheSize ", tc.cacheSize), func(t *testing.T) {
			table, idem := testkit.Table(t, db, "counts", "pk"), testkit.IdempotencyTable(t, db)
			c := testkit.NewConsumer(t, db, counting(table), idempotency.Config{Table: idem, CacheSize: tc.cacheSize}, sqsbatch.Config{})
			m := testkit.FIFO("q").Message("g", event(t, "e1"))
			c.Receive(testkit.Batch(m))
			k, _ := attributevalue.MarshalMap(key{operator.Key("test", "e1")})
			if _, err := db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(idem), Key: k}); err != nil {
				t.Fatal(err)
			}
			c.Receive(testkit.Batch(testkit.Again(m)))
			if got := n(t, db, table); got != tc.want {
				t.Errorf("applied %d times; want %d", got, tc.want)
			}
		})
	}
}

// The three redeliveries of the kit against a handler that is not idempotent by itself: the
// same message again and the event under a new message id are duplicates by the record; after
// the record expired the event is applied again (the handler's own defence is then all there is).
func TestRedeliveries_are_duplicates_until_the_record_expires(t *testing.T) {
	db := testkit.DynamoDB(t)
	table := testkit.Table(t, db, "counts", "pk")
	clock := testkit.NewClock()
	c := testkit.NewConsumer(t, db, counting(table), idempotency.Config{Now: clock.Now}, sqsbatch.Config{})
	q := testkit.FIFO("orders")
	m := q.Message("g", event(t, "e1"))
	for _, batch := range [][]string{c.Receive(testkit.Batch(m)), c.Receive(testkit.Batch(testkit.Again(m))), c.Receive(testkit.Batch(q.Resent(m)))} {
		if len(batch) != 0 {
			t.Fatalf("failed %v; want none", batch)
		}
	}
	if got, dup := n(t, db, table), c.Count(metrics.Duplicate); got != 1 || dup != 2 {
		t.Fatalf("applied %d times, %v duplicates; want once and 2", got, dup)
	}
	clock.ExpireRecords(idempotency.DefaultRetention)
	c.Receive(testkit.Batch(testkit.Again(m)))
	if got := n(t, db, table); got != 2 {
		t.Errorf("after the record expired, applied %d times in all; want 2", got)
	}
}

// Messages carry what SQS sets: a redelivery keeps the id and counts the receive, a re-send is a
// new message of the group, later in it; a batch keeps several messages of one group in order.
func TestQueue_builds_messages_as_SQS_delivers_them(t *testing.T) {
	q := testkit.FIFO("orders")
	a, b := q.Message("g", "a"), q.Message("g", "b")
	again, resent := testkit.Again(testkit.Again(a)), q.Resent(a)
	da, dAgain, dResent := sqsbatch.DeliveryOf(a), sqsbatch.DeliveryOf(again), sqsbatch.DeliveryOf(resent)
	switch {
	case da.Group != "g" || da.ReceiveCount != 1 || da.SequenceNumber == "" || a.Attributes["MessageDeduplicationId"] == "":
		t.Errorf("first delivery %+v %v; want group g, receive count 1, a sequence number and a dedup id", da, a.Attributes)
	case dAgain.MessageID != da.MessageID || dAgain.ReceiveCount != 3 || a.Attributes["ApproximateReceiveCount"] != "1":
		t.Errorf("redelivered twice %+v; want the same id, receive count 3, the original untouched", dAgain)
	case dResent.MessageID == da.MessageID || dResent.Body != da.Body || dResent.Group != "g" || dResent.SequenceNumber <= b.Attributes["SequenceNumber"]:
		t.Errorf("resent %+v; want a new id, the same body and group, after b", dResent)
	case !strings.HasSuffix(a.EventSourceARN, ":orders.fifo"):
		t.Errorf("EventSourceARN %q", a.EventSourceARN)
	}
	if batch := testkit.Batch(a, b); len(batch.Records) != 2 || batch.Records[1].Body != "b" {
		t.Errorf("batch %+v; want a then b", batch.Records)
	}
	if m := testkit.Again(events.SQSMessage{MessageId: "own"}); m.Attributes["ApproximateReceiveCount"] != "2" {
		t.Errorf("a message built by hand, received again, has receive count %q; want 2", m.Attributes["ApproximateReceiveCount"])
	}
	if s := testkit.Standard("q").Message("g", "x"); s.Attributes["MessageGroupId"] != "" {
		t.Errorf("a standard queue's message has group %q", s.Attributes["MessageGroupId"])
	}
}
