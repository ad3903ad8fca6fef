package sqsbatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// packEnv is a packing test's tables and a client counting its requests.
type packEnv struct {
	db       *dynamodb.Client
	requests *testenv.Requests
	app      string
	records  string
	logs     *bytes.Buffer
	id       string       // unique to the test, in every event id and counter name
	refused  atomic.Int64 // calls DynamoDB refused as invalid (ValidationException)
}

func newPackEnv(t *testing.T, opts ...func(*dynamodb.Options)) *packEnv {
	t.Helper()
	e := &packEnv{requests: &testenv.Requests{}, logs: &bytes.Buffer{}, id: testkit.Name("p")}
	e.db = testkit.DynamoDB(t, append(opts, dynamodb.WithAPIOptions(e.requests.Middleware, e.countRefusals))...)
	e.app = testkit.Table(t, e.db, "pack-app", "pk", "sk")
	e.records = testkit.Table(t, e.db, "pack-idem", "pk")
	return e
}

// countRefusals counts the calls DynamoDB refuses as invalid: a pack with two operations on
// one item, or over 100 items, would be.
func (e *packEnv) countRefusals(s *middleware.Stack) error {
	return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("CountRefusals",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleFinalize(ctx, in)
			var api smithy.APIError
			if errors.As(err, &api) && api.ErrorCode() == "ValidationException" {
				e.refused.Add(1)
			}
			return out, md, err
		}), middleware.After)
}

// bump is the data of the test events: add By to each of Counters.
type bump struct {
	Counters []string `json:"counters"`
	By       int      `json:"by"`
}

// router handles "t.add" (ADD by to every counter) and "t.capped" (the same, rejected with
// "over the cap" when a counter would exceed 10).
func (e *packEnv) router() *idempotency.Router {
	r := idempotency.NewRouter()
	idempotency.Route(r, "t.add", func(_ cloudevent.Event, d bump) (idempotency.Effect, error) {
		var eff idempotency.Effect
		for _, c := range d.Counters {
			eff = append(eff, e.add(c, d.By))
		}
		return eff, nil
	})
	idempotency.Route(r, "t.capped", func(_ cloudevent.Event, d bump) (idempotency.Effect, error) {
		cond := expression.Name("n").AttributeNotExists().Or(expression.Name("n").LessThanEqual(expression.Value(10 - d.By)))
		return idempotency.Effect{e.add(d.Counters[0], d.By).If(cond).OrReject("over the cap")}, nil
	})
	return r
}

func (e *packEnv) add(counter string, by int) idempotency.Write {
	return idempotency.Update(e.app, e.counterKey(counter), expression.Add(expression.Name("n"), expression.Value(by)))
}

func (e *packEnv) counterKey(name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "COUNTER#" + e.id + "#" + name},
		"sk": &types.AttributeValueMemberS{Value: "COUNTER"},
	}
}

func (e *packEnv) processor(t *testing.T, cfg sqsbatch.Config, mod ...func(*idempotency.Config)) *sqsbatch.Processor {
	t.Helper()
	c := idempotency.Config{Name: "packed", Table: e.records, CacheSize: -1, Logger: slog.New(slog.NewJSONHandler(e.logs, nil))}
	for _, m := range mod {
		m(&c)
	}
	p, err := sqsbatch.NewConsumer(e.db, e.router(), c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// msg is "group/id type counter,counter by", e.g. "a/1 t.add x 1".
func (e *packEnv) msg(t *testing.T, spec string) events.SQSMessage {
	t.Helper()
	f := strings.Fields(spec)
	group, id, _ := strings.Cut(f[0], "/")
	by, err := strconv.Atoi(f[3])
	if err != nil {
		t.Fatal(err)
	}
	eventID := e.id + "-" + f[0]
	ev, err := cloudevent.New(eventID, "test", f[1], "s", time.Now(), bump{Counters: strings.Split(f[2], ","), By: by})
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return events.SQSMessage{MessageId: f[0], Body: string(body), EventSource: "aws:sqs",
		EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:packed.fifo",
		Attributes:     map[string]string{"MessageGroupId": group, "SequenceNumber": id, "ApproximateReceiveCount": "1"}}
}

func (e *packEnv) batch(t *testing.T, specs ...string) events.SQSEvent {
	var ev events.SQSEvent
	for _, s := range specs {
		ev.Records = append(ev.Records, e.msg(t, s))
	}
	return ev
}

func (e *packEnv) counter(t *testing.T, name string) int {
	t.Helper()
	out, err := e.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(e.app),
		Key: e.counterKey(name), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ N int }
	if err := attributevalue.UnmarshalMap(out.Item, &v); err != nil {
		t.Fatal(err)
	}
	return v.N
}

// outcomes returns the outcome logged for each message id, failing on a message logged twice.
func (e *packEnv) outcomes(t *testing.T) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, line := range e.lines(t) {
		id, _ := line["messageId"].(string)
		outcome, ok := line["outcome"].(string)
		if !ok || id == "" {
			continue
		}
		if prev, dup := got[id]; dup {
			t.Fatalf("message %s logged twice: %s and %s", id, prev, outcome)
		}
		got[id] = outcome
	}
	e.logs.Reset()
	return got
}

func (e *packEnv) lines(t *testing.T) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func handleAll(t *testing.T, p *sqsbatch.Processor, ev events.SQSEvent) []string {
	t.Helper()
	resp, err := p.Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

func specs(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i, i)
	}
	return out
}
