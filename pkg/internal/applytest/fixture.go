package applytest

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// Counted is the data of a test event whose effect adds By to a counter: applying it twice
// is visible.
type Counted struct {
	Counter string `json:"counter"`
	By      int    `json:"by"`
}

// Validate refuses a counter without a name or a non-positive amount.
func (c Counted) Validate() error {
	if c.Counter == "" {
		return cloudevent.Malformed("data.counter", "missing")
	}
	if c.By <= 0 {
		return cloudevent.Malformed("data.by", "must be positive, got %d", c.By)
	}
	return nil
}

// Fixture is one test's tables, client and logs.
type Fixture struct {
	DB       *dynamodb.Client  // DynamoDB Local, its requests counted
	Requests *testenv.Requests // the requests DB sent
	App      string            // the table of effects (string keys pk and sk)
	Records  string            // the idempotency table
	Logs     *bytes.Buffer     // what Logger wrote
	// Logger writes to Logs for every consumer of the fixture: one handler serialises the
	// writes of consumers logging at once from several goroutines (parallel subtests).
	Logger *slog.Logger
}

// New creates the fixture's tables on DynamoDB Local; they are deleted when the test ends.
func New(t *testing.T) *Fixture {
	t.Helper()
	f := &Fixture{Requests: &testenv.Requests{}, Logs: &bytes.Buffer{}}
	f.Logger = slog.New(slog.NewJSONHandler(f.Logs, nil))
	f.DB = testkit.DynamoDB(t, dynamodb.WithAPIOptions(f.Requests.Middleware))
	f.App = testkit.Table(t, f.DB, "app", "pk", "sk")
	f.Records = testkit.Table(t, f.DB, "idem", "pk")
	return f
}

// Router handles "test.counted" (ADD by to the counter) and "test.capped" (the same, guarded
// by a cap of 10, rejected with "over the cap" beyond it).
func (f *Fixture) Router() *idempotency.Router {
	r := idempotency.NewRouter()
	idempotency.Route(r, "test.counted", func(ev cloudevent.Event, d Counted) (idempotency.Effect, error) {
		return idempotency.Effect{f.Add(d)}, nil
	})
	idempotency.Route(r, "test.capped", func(ev cloudevent.Event, d Counted) (idempotency.Effect, error) {
		cond := expression.Name("n").AttributeNotExists().Or(expression.Name("n").LessThanEqual(expression.Value(10 - d.By)))
		return idempotency.Effect{f.Add(d).If(cond).OrReject("over the cap")}, nil
	})
	return r
}

// Add is the write that adds d.By to d.Counter.
func (f *Fixture) Add(d Counted) idempotency.Write {
	return idempotency.Update(f.App, CounterKey(d.Counter), expression.Add(expression.Name("n"), expression.Value(d.By)))
}

// CounterKey is the key of a counter's item in the table of effects.
func CounterKey(name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "COUNTER#" + name},
		"sk": &types.AttributeValueMemberS{Value: "COUNTER"},
	}
}

// Consumer is a consumer of the fixture's Router; mod adjusts its configuration.
func (f *Fixture) Consumer(t *testing.T, name string, mod ...func(*idempotency.Config)) *idempotency.Consumer {
	t.Helper()
	return f.ConsumerFor(t, name, f.Router(), mod...)
}

// ConsumerFor is a consumer of h on the fixture's idempotency table, its cache off.
func (f *Fixture) ConsumerFor(t testing.TB, name string, h idempotency.Handler, mod ...func(*idempotency.Config)) *idempotency.Consumer {
	t.Helper()
	cfg := idempotency.Config{Name: name, Table: f.Records, CacheSize: -1, Logger: f.Logger}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := idempotency.New(f.DB, h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Leased is a lease.Consumer of effect on the fixture's idempotency table, through db (the
// fixture's client when nil), its cache off; mod adjusts its configuration.
func (f *Fixture) Leased(t *testing.T, name string, db idempotency.DB, effect lease.SideEffect, mod ...func(*lease.Config)) *lease.Consumer {
	t.Helper()
	if db == nil {
		db = f.DB
	}
	cfg := lease.Config{Config: idempotency.Config{Name: name, Table: f.Records, CacheSize: -1, Logger: f.Logger}}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := lease.New(db, effect, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Counter reads a counter's value (0 when absent).
func (f *Fixture) Counter(t *testing.T, name string) int {
	t.Helper()
	out, err := f.DB.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(f.App), Key: CounterKey(name), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ N int }
	if err := attributevalue.UnmarshalMap(out.Item, &v); err != nil {
		t.Fatal(err)
	}
	return v.N
}

// Record reads the idempotency table's item of key, and whether there is one.
func (f *Fixture) Record(t *testing.T, key string) (operator.Record, bool) {
	t.Helper()
	out, err := f.DB.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(f.Records), ConsistentRead: aws.Bool(true),
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

// Faulty returns a client for DynamoDB Local whose calls go through fault, an SDK middleware
// between the engine and DynamoDB Local: it sees every call with its input, and may change what
// happens to it.
func Faulty(t *testing.T, fault func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error)) *dynamodb.Client {
	t.Helper()
	return testkit.DynamoDB(t, dynamodb.WithAPIOptions(func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("fault", fault), middleware.Before)
	}))
}
