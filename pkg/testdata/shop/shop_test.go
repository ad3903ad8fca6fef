package shop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"example.com/shop"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// local is this service's own wiring to the emulators the onceflow Makefile starts.
type local struct {
	db          *dynamodb.Client
	sqs         *sqs.Client
	table, idem string
	suffix      string
}

func newLocal(t *testing.T) *local {
	t.Helper()
	sq := testkit.Emulator(t, testkit.SQSEndpointVariable)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("shop", "shop", "")}
	l := &local{
		db:     testkit.DynamoDB(t),
		sqs:    sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(sq) }),
		suffix: fmt.Sprint(time.Now().UnixNano()),
	}
	l.table = testkit.Table(t, l.db, "shop", "pk", "sk")
	l.idem = testkit.IdempotencyTable(t, l.db)
	return l
}

func (l *local) queue(t *testing.T, name string) string {
	t.Helper()
	out, err := l.sqs.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name + "-" + l.suffix + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl)
}

func (l *local) spend(t *testing.T, customer string) int64 {
	t.Helper()
	key, _ := attributevalue.MarshalMap(shop.Spend(customer))
	out, err := l.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(l.table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Total int64 }
	_ = attributevalue.UnmarshalMap(out.Item, &v)
	return v.Total
}

func message(t *testing.T, id, typ string, o shop.Order) events.SQSMessage {
	t.Helper()
	ev, err := cloudevent.New(typ+"-"+o.OrderID, "shop/api", typ, o.CustomerID, time.Now(), o)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := cloudevent.Encode(ev)
	return events.SQSMessage{MessageId: id, Body: string(body), EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:orders.fifo",
		Attributes: map[string]string{"MessageGroupId": o.CustomerID, "ApproximateReceiveCount": "1"}}
}

func TestSpend_consumer_applies_each_order_once_through_SQS_batches(t *testing.T) {
	l := newLocal(t)
	dlq := l.queue(t, "spend-dlq")
	var emf bytes.Buffer
	p, err := sqsbatch.NewConsumer(l.db, shop.Handler(l.table),
		idempotency.Config{Name: "spend", Table: l.idem, CacheSize: -1, // the redelivery reaches DynamoDB
			Metrics: metrics.NewEMF(&emf, "shop", nil), Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))},
		sqsbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(l.sqs, dlq)}})
	if err != nil {
		t.Fatal(err)
	}
	placed := message(t, "m1", shop.OrderPlaced, shop.Order{OrderID: "o1", CustomerID: "c1", Total: 30})
	tooMuch := message(t, "m2", shop.OrderRefunded, shop.Order{OrderID: "o2", CustomerID: "c1", Total: 100})
	garbage := events.SQSMessage{MessageId: "m3", Body: "not an event", EventSourceARN: placed.EventSourceARN,
		Attributes: map[string]string{"MessageGroupId": "c2"}}
	redelivered := placed
	redelivered.MessageId = "m1-again"

	for i, batch := range [][]events.SQSMessage{{placed, tooMuch, garbage}, {redelivered}} {
		resp, err := p.Handle(context.Background(), events.SQSEvent{Records: batch})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("batch %d: failures %v, %v; want none", i, resp.BatchItemFailures, err)
		}
	}
	if got := l.spend(t, "c1"); got != 30 {
		t.Errorf("spend = %d; want 30: the order applied once, the refund rejected", got)
	}
	counts := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(emf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		for _, name := range []string{metrics.Applied, metrics.Rejected, metrics.Malformed, metrics.Duplicate, metrics.DeadLettered} {
			if n, ok := m[name].(float64); ok {
				counts[name] += n
			}
		}
	}
	want := map[string]float64{metrics.Applied: 1, metrics.Rejected: 1, metrics.Malformed: 1, metrics.Duplicate: 1, metrics.DeadLettered: 1}
	for name, n := range want {
		if counts[name] != n {
			t.Errorf("metric %s = %v; want %v (all: %v)", name, counts[name], n, counts)
		}
	}
	out, err := l.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq),
		MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "not an event" ||
		!strings.Contains(aws.ToString(out.Messages[0].MessageAttributes[deadletter.AttrReason].StringValue), "malformed") {
		t.Errorf("dead letters = %+v; want the malformed message with its reason", out.Messages)
	}
}

func TestSpend_consumer_applies_a_decoded_event_without_SQS(t *testing.T) {
	l := newLocal(t)
	c, err := idempotency.New(l.db, shop.Handler(l.table), idempotency.Config{Name: "spend", Table: l.idem,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := cloudevent.New("order.placed-o9", "shop/api", shop.OrderPlaced, "c9", time.Now(), shop.Order{OrderID: "o9", CustomerID: "c9", Total: 12})
	for i, want := range []idempotency.Outcome{idempotency.Applied, idempotency.Duplicate} {
		res, err := c.Apply(context.Background(), ev, port.Delivery{MessageID: fmt.Sprint("stream-record-", i)})
		if err != nil || res.Outcome != want {
			t.Fatalf("apply %d = %+v, %v; want %s", i, res, err, want)
		}
	}
	if got := l.spend(t, "c9"); got != 12 {
		t.Errorf("spend = %d; want 12", got)
	}
}

func TestShop_publishes_an_order_once_through_its_outbox_and_directly(t *testing.T) {
	l := newLocal(t)
	ev, _ := cloudevent.New("order.placed-o5", "shop/api", shop.OrderPlaced, "c5", time.Now(), shop.Order{OrderID: "o5", CustomerID: "c5", Total: 5})
	w, err := outbox.Put(l.table, ev, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{w}}); err != nil {
		t.Fatalf("write the outbox item: %v", err)
	}
	orders := l.queue(t, "orders")
	pub, err := publish.New(l.sqs, publish.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a retried publish of the same event
		if err := pub.Publish(context.Background(), orders, ev); err != nil {
			t.Fatal(err)
		}
	}
	out, err := l.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(orders), MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 {
		t.Fatalf("received %d messages; want the one event", len(out.Messages))
	}
	got, err := cloudevent.Decode([]byte(aws.ToString(out.Messages[0].Body)))
	if err != nil || got.ID != ev.ID {
		t.Fatalf("received %+v, %v; want event %s", got, err, ev.ID)
	}
}
