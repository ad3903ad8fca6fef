package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	"github.com/onceflow/onceflow/pkg/operator"
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
	return f.consumerOf(t, f.h.router(), mod...)
}

// consumerOf is consumer with the handler h.
func (f *readFixture) consumerOf(t *testing.T, h idempotency.Handler, mod ...func(*idempotency.Config)) *idempotency.Consumer {
	t.Helper()
	db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(f.Requests.Middleware, fault.RaceCommits(1<<30,
		func(ctx context.Context, in *dynamodb.TransactWriteItemsInput) error {
			f.commits = append(f.commits, in)
			if f.raceWith == nil || int64(len(f.commits)) > f.races {
				return nil
			}
			return f.raceWith(ctx)
		})))
	through := *f.Fixture // the fixture's tables, through the racing client
	through.DB = db
	return through.ConsumerFor(t, "reserve", h, mod...)
}

func (f *readFixture) putStock(t *testing.T, item string, total, reserved int) {
	t.Helper()
	k := stockKey(item)
	f.put(t, stock{PK: k["pk"], SK: k["sk"], Stock: total, Reserved: reserved})
}

// put writes item, as the fixture's writer, to the table of effects.
func (f *readFixture) put(t *testing.T, item any) {
	t.Helper()
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.App), Item: av}); err != nil {
		t.Fatal(err)
	}
}

// key is k as attribute values.
func (f *readFixture) key(k map[string]string) map[string]types.AttributeValue {
	av, _ := attributevalue.MarshalMap(k)
	return av
}

func (f *readFixture) stock(t *testing.T, item string) (stock, bool) {
	t.Helper()
	out, err := f.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(f.App), Key: f.key(stockKey(item)), ConsistentRead: aws.Bool(true)})
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

// A read that found no item is a condition that the item is still absent: a writer creating it
// before the commit makes the event decided again, on the item created.
func TestRead_of_an_absent_item_is_conditioned_on_its_absence(t *testing.T) {
	t.Run("an item", readAbsentItem)
	t.Run("an attribute the struct names", readAbsentAttribute)
}

func readAbsentItem(t *testing.T) {
	f := newReadFixture(t, 1)
	f.raceWith = func(context.Context) error { f.putStock(t, "gadget", 5, 0); return nil }
	c := f.consumer(t)
	id := applytest.Unique(t)
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "stock.reserve", reserve{Item: "gadget", Quantity: 2}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
	}
	first := f.commits[0].TransactItems
	if len(first) != 3 || first[1].ConditionCheck == nil || !strings.Contains(aws.ToString(first[1].ConditionCheck.ConditionExpression), "attribute_not_exists") {
		t.Fatalf("first commit %s; want the reservation, a ConditionCheck that the stock is absent, the record", describeItems(first))
	}
	if got := f.status(t, id); got != "reserved" {
		t.Errorf("reservation %q, want reserved (decided again on the stock created)", got)
	}
	if s, _ := f.stock(t, "gadget"); s.Reserved != 2 {
		t.Errorf("reserved %d, want 2", s.Reserved)
	}
}

// An attribute that the struct a handler reads into names, and that the item lacked, is
// conditioned on its absence: a writer adding it makes the event decided again.
func readAbsentAttribute(t *testing.T) {
	f := newReadFixture(t, 1)
	k := stockKey("screw")
	f.put(t, map[string]any{"pk": k["pk"], "sk": k["sk"], "stock": 10}) // nothing reserved yet: no attribute
	f.raceWith = func(context.Context) error {
		f.put(t, map[string]any{"pk": k["pk"], "sk": k["sk"], "stock": 10, "reserved": 7})
		return nil
	}
	c := f.consumer(t)
	id := applytest.Unique(t)
	if res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "stock.reserve", reserve{Item: "screw", Quantity: 4})); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
	}
	if got := f.status(t, id); got != "out of stock" {
		t.Errorf("reservation %q, want out of stock (7 reserved by the writer, 4 more asked of 10)", got)
	}
	if s, _ := f.stock(t, "screw"); s.Reserved != 7 {
		t.Errorf("reserved %d, want 7", s.Reserved)
	}
}

// A read of an item the effect writes is checked by that write's own condition (DynamoDB takes
// one operation per item in a transaction), and a failure of the write's own condition on the
// item as read is a rejection, not a changed read.
func TestRead_of_an_item_the_effect_writes_folds_into_its_condition(t *testing.T) {
	f := newReadFixture(t, 0)
	f.putStock(t, "bolt", 10, 3)
	f.h.table = f.App
	r := idempotency.NewRouter()
	idempotency.RouteReading(r, "stock.take", func(ctx context.Context, ev cloudevent.Event, d reserve) (idempotency.Effect, error) {
		var s stock
		if _, err := idempotency.Read(ctx, f.App, stockKey(d.Item), &s); err != nil {
			return nil, err
		}
		return idempotency.Effect{idempotency.Update(f.App, stockKey(d.Item), expression.Set(expression.Name("reserved"), expression.Value(s.Reserved+d.Quantity))).
			If(expression.Name("stock").GreaterThanEqual(expression.Value(s.Reserved + d.Quantity))).OrReject("not enough stock")}, nil
	})
	c := f.consumerOf(t, r)
	ctx := context.Background()
	res, err := applytest.Process(ctx, c, applytest.Message(t, "m1", applytest.Unique(t)+"-1", "stock.take", reserve{Item: "bolt", Quantity: 4}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
	}
	items := f.commits[0].TransactItems
	if len(items) != 2 || items[0].Update == nil || !strings.Contains(aws.ToString(items[0].Update.ConditionExpression), ") AND (") {
		t.Fatalf("commit %s; want the Update carrying its own condition and the read's, then the record", describeItems(items))
	}
	res, err = applytest.Process(ctx, c, applytest.Message(t, "m2", applytest.Unique(t)+"-2", "stock.take", reserve{Item: "bolt", Quantity: 4}))
	if err != nil || res.Outcome != idempotency.Rejected || res.Reason != "not enough stock" {
		t.Fatalf("outcome %s (%q), %v; want rejected, not enough stock", res.Outcome, res.Reason, err)
	}
	if s, _ := f.stock(t, "bolt"); s.Reserved != 7 {
		t.Errorf("reserved %d, want 7", s.Reserved)
	}
}

// An item that keeps changing under a concurrent writer exhausts the bound: the message fails
// transiently, to be delivered again, and is not counted as a failed attempt of its own.
func TestRead_changed_past_the_bound_fails_transiently_uncounted(t *testing.T) {
	f := newReadFixture(t, 1<<20)
	f.putStock(t, "nut", 100, 0)
	n := 0
	f.raceWith = func(context.Context) error { n++; f.putStock(t, "nut", 100, n); return nil }
	rec, emf := testenv.NewEMF(nil)
	c := f.consumer(t, func(cfg *idempotency.Config) { cfg.Redecisions, cfg.Metrics = 2, rec })
	id := applytest.Unique(t)
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "stock.reserve", reserve{Item: "nut", Quantity: 1}))
	if err == nil || idempotency.IsPermanent(err) || res.Outcome != idempotency.Failed {
		t.Fatalf("outcome %s, %v; want failed, transient", res.Outcome, err)
	}
	if !strings.Contains(err.Error(), "changed") {
		t.Errorf("error %q; want it to say an item read changed", err)
	}
	if got := f.h.decisions.Load(); got != 3 {
		t.Errorf("decided %d times, want 3 (the first and 2 more)", got)
	}
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := emf.Count(metrics.Redecided); got != 2 {
		t.Errorf("Redecided %v, want 2", got)
	}
	if _, ok := f.Record(t, operator.Key("reserve", id)); ok {
		t.Errorf("a record was written for an event never applied")
	}
	if s, _ := f.stock(t, "nut"); s.Reserved != n {
		t.Errorf("reserved %d, want %d: the writer's alone", s.Reserved, n)
	}
}

// A redelivery of an applied event is answered from its record: the handler is not called and
// nothing is read. A first delivery of it (a producer's retry) meets the record's condition,
// which wins over a changed read: a duplicate, not a decision again.
func TestRead_duplicates_are_answered_from_the_record(t *testing.T) {
	f := newReadFixture(t, 0)
	f.putStock(t, "pin", 10, 0)
	c := f.consumer(t)
	ctx := context.Background()
	id := applytest.Unique(t)
	m := applytest.Message(t, "m1", id, "stock.reserve", reserve{Item: "pin", Quantity: 1})
	if res, err := applytest.Process(ctx, c, m); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
	}
	reads := f.Requests.Of("GetItem")
	res, err := applytest.Process(ctx, c, applytest.Redelivered(m, 2))
	if err != nil || res.Outcome != idempotency.Duplicate || f.h.decisions.Load() != 1 {
		t.Fatalf("redelivery: outcome %s, %v, decided %d times; want a duplicate, decided once", res.Outcome, err, f.h.decisions.Load())
	}
	if got := f.Requests.Of("GetItem") - reads; got != 1 {
		t.Errorf("redelivery read %d items; want 1, its record", got)
	}
	f.races, f.raceWith = 1<<20, func(context.Context) error { f.putStock(t, "pin", 10, 5); return nil }
	res, err = applytest.Process(ctx, c, applytest.Message(t, "m2", id, "stock.reserve", reserve{Item: "pin", Quantity: 1}))
	if err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("resent: outcome %s, %v; want a duplicate", res.Outcome, err)
	}
	if got := f.h.decisions.Load(); got != 2 {
		t.Errorf("decided %d times; want 2 (the resent one once, answered by the record)", got)
	}
}

// Reads count against the 100 items of a transaction: an effect with its checks past the
// limit is invalid, saying so, before anything is written.
func TestRead_counts_against_the_transaction_limit(t *testing.T) {
	f := newReadFixture(t, 0)
	r := idempotency.NewRouter()
	idempotency.RouteReading(r, "many.read", func(ctx context.Context, ev cloudevent.Event, _ struct{}) (idempotency.Effect, error) {
		var effect idempotency.Effect
		for i := range 60 {
			if _, err := idempotency.Read(ctx, f.App, stockKey(fmt.Sprint("r", i)), nil); err != nil {
				return nil, err
			}
			effect = append(effect, f.Add(applytest.Counted{Counter: fmt.Sprint("w", i), By: 1}))
		}
		return effect, nil
	})
	c := f.consumerOf(t, r)
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", applytest.Unique(t), "many.read", struct{}{}))
	if !errors.Is(err, idempotency.ErrInvalidEffect) || !idempotency.IsPermanent(err) || !strings.Contains(err.Error(), "60 reads") {
		t.Fatalf("outcome %s, %v; want an invalid effect counting 60 reads", res.Outcome, err)
	}
	if len(f.commits) != 0 {
		t.Errorf("%d commits sent; want none", len(f.commits))
	}
}

// Read is the engine's: outside a Consumer's decision (a handler's own test calling Decide) it
// says so.
func TestRead_outside_a_decision_is_an_error(t *testing.T) {
	_, err := idempotency.Read(context.Background(), "app", stockKey("x"), nil)
	if err == nil || !strings.Contains(err.Error(), "outside a decision") {
		t.Fatalf("Read outside a decision: %v; want an error saying so", err)
	}
}

func describeItems(items []types.TransactWriteItem) string {
	var b strings.Builder
	for _, it := range items {
		switch {
		case it.Put != nil:
			fmt.Fprintf(&b, "[Put %s]", aws.ToString(it.Put.ConditionExpression))
		case it.Update != nil:
			fmt.Fprintf(&b, "[Update %s]", aws.ToString(it.Update.ConditionExpression))
		case it.Delete != nil:
			fmt.Fprintf(&b, "[Delete %s]", aws.ToString(it.Delete.ConditionExpression))
		case it.ConditionCheck != nil:
			fmt.Fprintf(&b, "[ConditionCheck %s]", aws.ToString(it.ConditionCheck.ConditionExpression))
		}
	}
	return b.String()
}

// An item read with sets, lists and maps, unchanged, passes its check as read: DynamoDB's
// equality holds for every type, so nothing is decided again.
func TestRead_of_an_unchanged_item_of_every_type_commits_at_once(t *testing.T) {
	f := newReadFixture(t, 0)
	k := stockKey("doc")
	f.put(t, map[string]any{"pk": k["pk"], "sk": k["sk"], "stock": 10, "reserved": 1, "tags": []string{"b", "a"},
		"sizes": map[string]any{"s": 1, "m": []any{"x", 2, true}}, "note": nil, "blob": []byte{0, 1}, "ok": true})
	if _, err := f.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(f.App), Key: f.key(k),
		UpdateExpression: aws.String("ADD colours :c, counts :n"), ExpressionAttributeValues: map[string]types.AttributeValue{
			":c": &types.AttributeValueMemberSS{Value: []string{"red", "blue", "green"}}, ":n": &types.AttributeValueMemberNS{Value: []string{"3", "1", "2"}}}}); err != nil {
		t.Fatal(err)
	}
	c := f.consumer(t)
	id := applytest.Unique(t)
	if res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "stock.reserve", reserve{Item: "doc", Quantity: 2})); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
	}
	if got := f.h.decisions.Load(); got != 1 {
		t.Errorf("decided %d times, want once: the item was not changed", got)
	}
	if s, _ := f.stock(t, "doc"); s.Reserved != 3 {
		t.Errorf("reserved %d, want 3", s.Reserved)
	}
}

// A read DynamoDB refuses as such (a key that does not match the table's schema) is a bug of
// the handler: permanent, the message dead-lettered with the reason.
func TestRead_refused_as_invalid_is_permanent(t *testing.T) {
	f := newReadFixture(t, 0)
	r := idempotency.NewRouter()
	idempotency.RouteReading(r, "bad.read", func(ctx context.Context, ev cloudevent.Event, _ struct{}) (idempotency.Effect, error) {
		_, err := idempotency.Read(ctx, f.App, map[string]string{"id": "no such key"}, nil)
		return nil, err
	})
	res, err := applytest.Process(context.Background(), f.consumerOf(t, r), applytest.Message(t, "m1", applytest.Unique(t), "bad.read", struct{}{}))
	if !idempotency.IsPermanent(err) || res.Outcome != idempotency.Failed {
		t.Fatalf("outcome %s, %v; want failed, permanent", res.Outcome, err)
	}
}
