package idempotency_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/onceflow/onceflow/internal/testenv"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// counted is the data of a test event whose effect adds By to a counter: applying it twice
// is visible.
type counted struct {
	Counter string `json:"counter"`
	By      int    `json:"by"`
}

func (c counted) Validate() error {
	if c.Counter == "" {
		return cloudevent.Malformed("data.counter", "missing")
	}
	if c.By <= 0 {
		return cloudevent.Malformed("data.by", "must be positive, got %d", c.By)
	}
	return nil
}

// fixture is one test's tables, client and consumer.
type fixture struct {
	db       *dynamodb.Client
	requests *testenv.Requests
	app      string // table of effects
	records  string // idempotency table
	logs     *bytes.Buffer
	// logger writes to logs for every consumer of the fixture: one handler serialises the
	// writes of consumers logging at once from several goroutines (parallel subtests).
	logger *slog.Logger
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{requests: &testenv.Requests{}, logs: &bytes.Buffer{}}
	f.logger = slog.New(slog.NewJSONHandler(f.logs, nil))
	f.db = testenv.DynamoDB(t, dynamodb.WithAPIOptions(f.requests.Middleware))
	f.app = testenv.CreateTable(t, f.db, "app", true)
	f.records = testenv.CreateTable(t, f.db, "idem", false)
	return f
}

// router handles "test.counted" (ADD by to the counter) and "test.capped" (the same, guarded
// by a cap of 10, rejected with "over the cap" beyond it).
func (f *fixture) router() *idempotency.Router {
	r := idempotency.NewRouter()
	idempotency.Route(r, "test.counted", func(ev cloudevent.Event, d counted) (idempotency.Effect, error) {
		return idempotency.Effect{f.add(d)}, nil
	})
	idempotency.Route(r, "test.capped", func(ev cloudevent.Event, d counted) (idempotency.Effect, error) {
		cond := expression.Name("n").AttributeNotExists().Or(expression.Name("n").LessThanEqual(expression.Value(10 - d.By)))
		return idempotency.Effect{f.add(d).If(cond).OrReject("over the cap")}, nil
	})
	return r
}

func (f *fixture) add(d counted) idempotency.Write {
	return idempotency.Update(f.app, counterKey(d.Counter), expression.Add(expression.Name("n"), expression.Value(d.By)))
}

func counterKey(name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "COUNTER#" + name},
		"sk": &types.AttributeValueMemberS{Value: "COUNTER"},
	}
}

func (f *fixture) consumer(t *testing.T, name string, mod ...func(*idempotency.Config)) *idempotency.Consumer {
	t.Helper()
	return f.consumerFor(t, name, f.router(), mod...)
}

func (f *fixture) consumerFor(t testing.TB, name string, h idempotency.Handler, mod ...func(*idempotency.Config)) *idempotency.Consumer {
	t.Helper()
	cfg := idempotency.Config{Name: name, Table: f.records, CacheSize: -1,
		Logger: f.logger}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := idempotency.New(f.db, h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
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

func (f *fixture) record(t *testing.T, key string) (operator.Record, bool) {
	t.Helper()
	out, err := f.db.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(f.records), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}}})
	if err != nil {
		t.Fatal(err)
	}
	var r operator.Record
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		t.Fatal(err)
	}
	return r, out.Item != nil
}

// message builds an SQS FIFO message carrying a CloudEvent.
var fixedTime = mustTime("2026-11-30T10:00:00Z")

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func message(t testing.TB, msgID, eventID, typ string, data any) events.SQSMessage {
	t.Helper()
	ev, err := cloudevent.New(eventID, "test", typ, "group-1", fixedTime, data)
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return sqsMessage(msgID, string(body), 1)
}

func sqsMessage(msgID, body string, receiveCount int) events.SQSMessage {
	return events.SQSMessage{
		MessageId: msgID, Body: body, EventSource: "aws:sqs",
		EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:test.fifo",
		Attributes: map[string]string{
			"MessageGroupId":          "group-1",
			"SequenceNumber":          "1000" + msgID,
			"ApproximateReceiveCount": strconv.Itoa(receiveCount),
		},
	}
}

func redelivered(m events.SQSMessage, receiveCount int) events.SQSMessage {
	m.Attributes = map[string]string{"MessageGroupId": m.Attributes["MessageGroupId"],
		"SequenceNumber": m.Attributes["SequenceNumber"], "ApproximateReceiveCount": strconv.Itoa(receiveCount)}
	return m
}

// redriven is m sent again by a redrive as message id: with the id it was first sent as.
func redriven(m events.SQSMessage, id string) events.SQSMessage {
	first := m.MessageId
	m = redelivered(m, 1)
	m.MessageId = id
	m.MessageAttributes = map[string]events.SQSMessageAttribute{deadletter.AttrOriginalMessageID: {DataType: "String", StringValue: &first}}
	return m
}

func permanent(err error) bool { return idempotency.IsPermanent(err) }

// applier is what idempotency.Consumer and lease.Consumer have in common.
type applier interface {
	Apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) (idempotency.Result, error)
}

// process applies an SQS message as the sqsbatch adapter does: a body that is not a CloudEvent
// is malformed.
func process(ctx context.Context, a applier, msg events.SQSMessage) (idempotency.Result, error) {
	ev, err := cloudevent.Decode([]byte(msg.Body))
	if err != nil {
		return idempotency.Result{Outcome: idempotency.Malformed}, err
	}
	return a.Apply(ctx, ev, sqsbatch.DeliveryOf(msg))
}

func unique(t *testing.T) string { return fmt.Sprintf("%s-%s", t.Name(), testenv.Name("e")) }

// An access denial is never permanent, however it is marked: it is the deployment's fault, and
// the message is applied once the permission is granted.
func TestIsPermanent_never_takes_an_access_denial_for_permanent(t *testing.T) {
	denial := &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "TransactWriteItems", Err: &smithy.GenericAPIError{
		Code: "AccessDeniedException", Message: "User: arn:aws:sts::000000000000:assumed-role/r/f is not authorized to perform: dynamodb:PutItem"}}
	if idempotency.IsPermanent(idempotency.Permanent(denial)) {
		t.Errorf("a denial marked permanent is permanent; want it never permanent")
	}
	if !idempotency.IsPermanent(idempotency.Permanent(errors.New("bad data"))) {
		t.Errorf("an error marked permanent is not permanent")
	}
}

// engineOf is c's engine, for what a port reaches only through a batch: holding a group,
// counting a failed attempt, as a test sets them up.
func engineOf(c *idempotency.Consumer) *engine.Consumer { return c.Engine().(*engine.Consumer) }
