package idempotency_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// stock is an item a reservation decides from: how many there are, how many are reserved.
type stock struct {
	PK       string `dynamodbav:"pk"`
	SK       string `dynamodbav:"sk"`
	Stock    int    `dynamodbav:"stock"`
	Reserved int    `dynamodbav:"reserved"`
}

// reserve is the data of an event that reserves Quantity of an item.
type reserve struct {
	Item     string `json:"item"`
	Quantity int    `json:"quantity"`
}

func stockKey(item string) map[string]string {
	return map[string]string{"pk": "STOCK#" + item, "sk": "STOCK"}
}

// reservations is a handler that reads an item's stock and decides a reservation from it: the
// reserved count set to what it read plus the quantity when that does not exceed the stock, a
// reservation item saying which it decided. It counts its decisions.
type reservations struct {
	table     string
	decisions atomic.Int64
}

func (h *reservations) router() *idempotency.Router {
	r := idempotency.NewRouter()
	idempotency.RouteReading(r, "stock.reserve", h.decide)
	return r
}

func (h *reservations) decide(ctx context.Context, ev cloudevent.Event, d reserve) (idempotency.Effect, error) {
	h.decisions.Add(1)
	var s stock
	found, err := idempotency.Read(ctx, h.table, stockKey(d.Item), &s)
	if err != nil {
		return nil, err
	}
	status := "reserved"
	if !found || s.Reserved+d.Quantity > s.Stock {
		status = "out of stock"
	}
	effect := idempotency.Effect{idempotency.Put(h.table, map[string]any{"pk": "RESERVATION#" + ev.ID, "sk": "RESERVATION", "status": status})}
	if status == "reserved" {
		effect = append(effect, idempotency.Update(h.table, stockKey(d.Item),
			expression.Set(expression.Name("reserved"), expression.Value(s.Reserved+d.Quantity))))
	}
	return effect, nil
}

// readFixture is a fixture whose consumer's client lets race write before each commit.
type readFixture struct {
	*fixture
	h        *reservations
	commits  []*dynamodb.TransactWriteItemsInput
	raceWith func(ctx context.Context) error
	races    int64
}

func newReadFixture(t *testing.T, races int64) *readFixture {
	f := &readFixture{fixture: newFixture(t), races: races}
	f.h = &reservations{table: f.App}
	return f
}

// consumer is a consumer of the reservations whose client runs f.raceWith before its first
// f.races commits, and keeps every commit's request.
func (f *readFixture) consumer(t *testing.T, mod ...func(*idempotency.Config)) *idempotency.Consumer {
	t.Helper()
	db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(f.Requests.Middleware, fault.RaceCommits(1<<30,
		func(ctx context.Context, in *dynamodb.TransactWriteItemsInput) error {
			f.commits = append(f.commits, in)
			if f.raceWith == nil || int64(len(f.commits)) > f.races {
				return nil
			}
			return f.raceWith(ctx)
		})))
	cfg := idempotency.Config{Name: "reserve", Table: f.Records, CacheSize: -1, Logger: f.Logger}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := idempotency.New(db, f.h.router(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *readFixture) putStock(t *testing.T, item string, total, reserved int) {
	t.Helper()
	k := stockKey(item)
	av, err := attributevalue.MarshalMap(stock{PK: k["pk"], SK: k["sk"], Stock: total, Reserved: reserved})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.App), Item: av}); err != nil {
		t.Fatal(err)
	}
}

func (f *readFixture) stock(t *testing.T, item string) (stock, bool) {
	t.Helper()
	key, _ := attributevalue.MarshalMap(stockKey(item))
	out, err := f.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(f.App), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var s stock
	if err := attributevalue.UnmarshalMap(out.Item, &s); err != nil {
		t.Fatal(err)
	}
	return s, out.Item != nil
}

func (f *readFixture) status(t *testing.T, eventID string) string {
	t.Helper()
	out, err := f.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(f.App), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "RESERVATION#" + eventID}, "sk": &types.AttributeValueMemberS{Value: "RESERVATION"}}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := out.Item["status"].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

// A concurrent writer that changes the item a handler read, between its read and its commit,
// fails the commit over to a decision on the item as it is now: the reservation is decided on
// the writer's reserved count, never on the stale one (which would lose the writer's update).
func TestRead_a_changed_read_decides_again_on_fresh_state(t *testing.T) {
	for _, tc := range []struct {
		name         string
		raced        int // reserved by the concurrent writer (from 0, of 10)
		wantReserved int
		wantStatus   string
	}{
		{"still fits", 2, 6, "reserved"},
		{"no longer fits", 8, 8, "out of stock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newReadFixture(t, 1)
			f.putStock(t, "widget", 10, 0)
			f.raceWith = func(context.Context) error { f.putStock(t, "widget", 10, tc.raced); return nil }
			rec, emf := testenv.NewEMF(nil)
			c := f.consumer(t, func(cfg *idempotency.Config) { cfg.Metrics = rec })
			id := applytest.Unique(t)
			res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "stock.reserve", reserve{Item: "widget", Quantity: 4}))
			if err != nil || res.Outcome != idempotency.Applied {
				t.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
			}
			if s, _ := f.stock(t, "widget"); s.Reserved != tc.wantReserved {
				t.Errorf("reserved %d, want %d", s.Reserved, tc.wantReserved)
			}
			if got := f.status(t, id); got != tc.wantStatus {
				t.Errorf("reservation %q, want %q", got, tc.wantStatus)
			}
			if got := f.h.decisions.Load(); got != 2 {
				t.Errorf("decided %d times, want 2", got)
			}
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := emf.Count(metrics.Redecided); got != 1 {
				t.Errorf("Redecided %v, want 1", got)
			}
		})
	}
}
