package operator_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// counted is the data of a test event whose effect adds By to a counter: applying it twice
// is visible.
type counted struct {
	Counter string `json:"counter"`
	By      int    `json:"by"`
}

// fixture is one test's tables and client: what a consumer writes, and what an operator reads
// and decides with an Admin.
type fixture struct {
	db      *dynamodb.Client
	app     string // table of effects
	records string // idempotency table
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := testkit.DynamoDB(t)
	return &fixture{db: db, app: testkit.Table(t, db, "app", "pk", "sk"), records: testkit.IdempotencyTable(t, db)}
}

// holding makes a consumer hold a group behind a dead letter, its cache off.
func holding(c *idempotency.Config) { c.AfterDeadLetter = idempotency.HoldGroup; c.CacheSize = -1 }

// consumer is a consumer of "test.counted" events (ADD by to the counter) named name.
func (f *fixture) consumer(t *testing.T, name string, mod ...func(*idempotency.Config)) *idempotency.Consumer {
	t.Helper()
	r := idempotency.NewRouter()
	idempotency.Route(r, "test.counted", func(ev cloudevent.Event, d counted) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Update(f.app, counterKey(d.Counter), expression.Add(expression.Name("n"), expression.Value(d.By)))}, nil
	})
	cfg := idempotency.Config{Name: name, Table: f.records, CacheSize: -1}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := idempotency.New(f.db, r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func counterKey(name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "COUNTER#" + name},
		"sk": &types.AttributeValueMemberS{Value: "COUNTER"},
	}
}

// counter reads a counter's value (0 when absent).
func (f *fixture) counter(t *testing.T, name string) int {
	t.Helper()
	out, err := f.db.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(f.app), Key: counterKey(name), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ N int }
	if err := attributevalue.UnmarshalMap(out.Item, &v); err != nil {
		t.Fatal(err)
	}
	return v.N
}

// holdKeys are the keys of the items of consumer's hold of group: its own and its pages.
func (f *fixture) holdKeys(t *testing.T, consumer, group string) []string {
	t.Helper()
	expr, err := expression.NewBuilder().WithFilter(expression.Name("pk").BeginsWith("#hold#" + consumer + "#" + group)).Build()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	p := dynamodb.NewScanPaginator(f.db, &dynamodb.ScanInput{TableName: aws.String(f.records), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range out.Items {
			var k struct {
				PK string `dynamodbav:"pk"`
			}
			if err := attributevalue.UnmarshalMap(item, &k); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k.PK)
		}
	}
	return keys
}

// message builds an SQS FIFO message of group-1 carrying a CloudEvent.
func message(t testing.TB, msgID, eventID, typ string, data any) events.SQSMessage {
	t.Helper()
	ev, err := cloudevent.New(eventID, "test", typ, "group-1", time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), data)
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return events.SQSMessage{
		MessageId: msgID, Body: string(body), EventSource: "aws:sqs",
		EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:test.fifo",
		Attributes: map[string]string{
			"MessageGroupId":          "group-1",
			"SequenceNumber":          "1000" + msgID,
			"ApproximateReceiveCount": "1",
		},
	}
}

func redelivered(m events.SQSMessage, receiveCount int) events.SQSMessage {
	m.Attributes = map[string]string{"MessageGroupId": m.Attributes["MessageGroupId"],
		"SequenceNumber": m.Attributes["SequenceNumber"], "ApproximateReceiveCount": strconv.Itoa(receiveCount)}
	return m
}

// process applies an SQS message as the sqsbatch adapter does.
func process(ctx context.Context, c *idempotency.Consumer, msg events.SQSMessage) (idempotency.Result, error) {
	ev, err := cloudevent.Decode([]byte(msg.Body))
	if err != nil {
		return idempotency.Result{Outcome: idempotency.Malformed}, err
	}
	return c.Apply(ctx, ev, sqsbatch.DeliveryOf(msg))
}

func unique(t *testing.T) string { return fmt.Sprintf("%s-%s", t.Name(), testkit.Name("e")) }

// engineOf is c's engine, for what a port reaches only through a batch: holding a group,
// counting a failed attempt, as a test sets them up.
func engineOf(c *idempotency.Consumer) *engine.Consumer { return c.Engine().(*engine.Consumer) }
