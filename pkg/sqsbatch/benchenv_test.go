package sqsbatch_test

import (
	"context"
	"fmt"
	"io"
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

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// benchEnv is one benchmark's tables and a client that reaches DynamoDB Local through a
// latency proxy, counting its requests.
type benchEnv struct {
	db       *dynamodb.Client
	requests *testenv.Requests
	app      string // the effects: notes
	records  string // the idempotency records
	quiet    *slog.Logger
}

// newBenchEnv creates fresh tables (directly) and a client reaching them at url, a latency
// proxy. Every variant gets its own tables: DynamoDB Local slows down as a table grows, which
// would otherwise favour the variants that run first.
func newBenchEnv(b *testing.B, url string) *benchEnv {
	direct := testkit.DynamoDB(b)
	e := &benchEnv{requests: &testenv.Requests{}, quiet: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	e.app = testkit.Table(b, direct, "sbs-app", "pk", "sk")
	e.records = testkit.Table(b, direct, "sbs-idem", "pk")
	e.db = testkit.DynamoDB(b, dynamodb.WithAPIOptions(e.requests.Middleware),
		func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(url) })
	return e
}

// benchNote is the event data: a note of realistic size.
type benchNote struct {
	NoteID  string `json:"noteId"`
	Title   string `json:"title"`
	Content string `json:"content"`
}

// noteItem is the effect of a note event: one Put of the note item.
func (e *benchEnv) noteItem(ev cloudevent.Event) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":      &types.AttributeValueMemberS{Value: "NOTE#" + ev.ID},
		"sk":      &types.AttributeValueMemberS{Value: "NOTE"},
		"payload": &types.AttributeValueMemberS{Value: string(ev.Data)},
	}
}

func (e *benchEnv) handler() idempotency.Handler {
	return idempotency.HandlerFunc(func(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Put(e.app, e.noteItem(ev))}, nil
	})
}

// config is the consumer's configuration; cacheSize -1 disables the cache.
func (e *benchEnv) config(cacheSize int) idempotency.Config {
	return idempotency.Config{Name: "sbs", Table: e.records, CacheSize: cacheSize, Logger: e.quiet}
}

func (e *benchEnv) consumer(b *testing.B, cacheSize int) *idempotency.Consumer {
	c, err := idempotency.New(e.db, e.handler(), e.config(cacheSize))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func (e *benchEnv) processor(b *testing.B, cacheSize int, cfg sqsbatch.Config) *sqsbatch.Processor {
	p, err := sqsbatch.NewFor(e.consumer(b, cacheSize).Engine(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// batches returns n messages of new events in FIFO batches of 10 messages in 10 groups.
func benchBatches(b *testing.B, prefix string, n int) []events.SQSEvent {
	out := make([]events.SQSEvent, 0, (n+9)/10)
	for i := 0; i < n; i += 10 {
		var batch events.SQSEvent
		for g := 0; g < 10 && i+g < n; g++ {
			batch.Records = append(batch.Records, benchMessage(b, fmt.Sprintf("%s-%d", prefix, i+g), g))
		}
		out = append(out, batch)
	}
	return out
}

func benchMessage(b *testing.B, id string, group int) events.SQSMessage {
	ev, err := cloudevent.New(id, "bench", "note.created", "note/"+id, time.Now(), benchNote{NoteID: id,
		Title:   "Quarterly #planning notes",
		Content: "Agenda: #budget review, #hiring plan, roadmap for the next quarter and open questions."})
	if err != nil {
		b.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		b.Fatal(err)
	}
	return events.SQSMessage{MessageId: "m-" + id, Body: string(body), EventSource: "aws:sqs",
		EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:bench.fifo",
		Attributes: map[string]string{"MessageGroupId": "g" + strconv.Itoa(group),
			"SequenceNumber": "1" + strconv.Itoa(group), "ApproximateReceiveCount": "1"}}
}

// floorItems are the writes the engine makes for msg, built by hand: the effect's Put and the
// record's Put under the same condition (no live record). It is what a consumer writing
// TransactWriteItems itself, without the engine, would send.
func (e *benchEnv) floorItems(b *testing.B, msg events.SQSMessage) []types.TransactWriteItem {
	ev, err := cloudevent.Decode([]byte(msg.Body))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	rec, err := attributevalue.MarshalMap(operator.Record{Key: operator.Key("sbs", ev.ID), Consumer: "sbs",
		EventID: ev.ID, EventType: ev.Type, OccurredAt: ev.Time.UTC().Format(time.RFC3339Nano),
		ProcessedAt: now.UTC().Format(time.RFC3339Nano), Outcome: string(idempotency.Applied),
		PayloadHash: ev.PayloadHash(), MessageID: msg.MessageId, SequenceNumber: msg.Attributes["SequenceNumber"],
		ReceiveCount: 1, ExpiresAt: now.Add(idempotency.DefaultRetention).Unix()})
	if err != nil {
		b.Fatal(err)
	}
	cond, err := expression.NewBuilder().WithCondition(expression.Name("pk").AttributeNotExists().
		Or(expression.Name("expiresAt").LessThan(expression.Value(now.Unix())))).Build()
	if err != nil {
		b.Fatal(err)
	}
	return []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(e.app), Item: e.noteItem(ev)}},
		{Put: &types.Put{TableName: aws.String(e.records), Item: rec, ConditionExpression: cond.Condition(),
			ExpressionAttributeNames: cond.Names(), ExpressionAttributeValues: cond.Values(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
	}
}
