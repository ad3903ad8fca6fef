package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
)

// markedRouter handles "test.marked": a marker item per event, new or a duplicate
// (OrDuplicate), then the capped counter add of test.capped, whose rejection also writes a
// status item (OnReject), and "test.badreject", whose OnReject write has a condition that
// fails without OrDuplicate.
func (f *fixture) markedRouter() *idempotency.Router {
	r := idempotency.NewRouter()
	isNew := expression.Name("pk").AttributeNotExists()
	capped := func(d applytest.Counted) idempotency.Write {
		return f.Add(d).If(expression.Name("n").AttributeNotExists().Or(expression.Name("n").LessThanEqual(expression.Value(10 - d.By)))).
			OrReject("over the cap")
	}
	idempotency.Route(r, "test.marked", func(ev cloudevent.Event, d applytest.Counted) (idempotency.Effect, error) {
		marker := idempotency.Put(f.App, keyed("DONE#"+ev.ID)).If(isNew).OrDuplicate()
		status := idempotency.Put(f.App, keyed("STATUS#"+ev.ID)).If(isNew).OrDuplicate()
		return idempotency.Effect{marker, capped(d).OnReject(status)}, nil
	})
	idempotency.Route(r, "test.badreject", func(ev cloudevent.Event, d applytest.Counted) (idempotency.Effect, error) {
		never := idempotency.Put(f.App, keyed("STATUS#"+ev.ID)).If(expression.Name("pk").AttributeExists())
		return idempotency.Effect{capped(d).OnReject(never)}, nil
	})
	return r
}

func keyed(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: "X"}}
}

func (f *fixture) exists(t *testing.T, pk string) bool {
	t.Helper()
	out, err := f.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(f.App), Key: keyed(pk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item != nil
}

// fill puts counter at 10, its cap.
func (f *fixture) fill(t *testing.T, counter string) {
	t.Helper()
	item := applytest.CounterKey(counter)
	item["n"] = &types.AttributeValueMemberN{Value: "10"}
	if _, err := f.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.App), Item: item}); err != nil {
		t.Fatal(err)
	}
}

// expire deletes the record of event id, as TTL does once its retention has passed.
func (f *fixture) expire(t *testing.T, consumer, id string) {
	t.Helper()
	if _, err := f.DB.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(f.Records),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: operator.Key(consumer, id)}}}); err != nil {
		t.Fatal(err)
	}
}

func TestConsumer_a_write_marked_OrDuplicate_keeps_a_redelivery_after_the_record_expired_a_duplicate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.ConsumerFor(t, "marked", f.markedRouter())
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.marked", applytest.Counted{Counter: id, By: 3})
	if res, err := applytest.Process(context.Background(), c, msg); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("first = %+v, %v; want applied", res, err)
	}
	f.expire(t, "marked", id)
	res, err := applytest.Process(context.Background(), c, applytest.Redelivered(msg, 2))
	if err != nil || res.Outcome != idempotency.Duplicate || res.Stored != "" {
		t.Fatalf("redelivery after expiry = %+v, %v; want a duplicate with no stored outcome", res, err)
	}
	if got := f.Counter(t, id); got != 3 {
		t.Fatalf("counter = %d; want 3, applied once", got)
	}
	if _, ok := f.Record(t, operator.Key("marked", id)); ok {
		t.Fatal("a duplicate recognised by the effect wrote a record")
	}
}

func TestConsumer_OrDuplicate_wins_over_OrReject_when_both_conditions_fail(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.ConsumerFor(t, "marked", f.markedRouter())
	id := applytest.Unique(t)
	first := applytest.Message(t, "m1", id+"-a", "test.marked", applytest.Counted{Counter: id, By: 6})
	for _, m := range []struct {
		msg  string
		want idempotency.Outcome
	}{{"first", idempotency.Applied}, {"second", idempotency.Applied}} {
		msg := first
		if m.msg == "second" {
			msg = applytest.Message(t, "m2", id+"-b", "test.marked", applytest.Counted{Counter: id, By: 4})
		}
		if res, err := applytest.Process(context.Background(), c, msg); err != nil || res.Outcome != m.want {
			t.Fatalf("%s = %+v, %v; want %s", m.msg, res, err, m.want)
		}
	}
	// The counter is at its cap: the first event, delivered again after its record expired,
	// fails both its marker's and its cap's conditions.
	f.expire(t, "marked", id+"-a")
	res, err := applytest.Process(context.Background(), c, applytest.Redelivered(first, 2))
	if err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("redelivery = %+v, %v; want duplicate, not rejected", res, err)
	}
	if f.exists(t, "STATUS#"+id+"-a") {
		t.Fatal("the applied event's rejection writes were committed")
	}
}

func TestConsumer_OnReject_writes_commit_with_the_rejection_record(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.ConsumerFor(t, "marked", f.markedRouter())
	id := applytest.Unique(t)
	f.fill(t, id)
	over := applytest.Message(t, "m1", id, "test.marked", applytest.Counted{Counter: id, By: 1})
	res, err := applytest.Process(context.Background(), c, over)
	if err != nil || res.Outcome != idempotency.Rejected || res.Reason != "over the cap" {
		t.Fatalf("over the cap = %+v, %v; want rejected", res, err)
	}
	if !f.exists(t, "STATUS#"+id) || f.exists(t, "DONE#"+id) {
		t.Fatal("want the OnReject write and not the effect's")
	}
	if rec, ok := f.Record(t, operator.Key("marked", id)); !ok || rec.Outcome != "rejected" {
		t.Fatalf("record = %+v (found %v); want rejected", rec, ok)
	}
	// After the record expired, the redelivery finds the status written with the rejection.
	f.expire(t, "marked", id)
	res, err = applytest.Process(context.Background(), c, applytest.Redelivered(over, 2))
	if err != nil || res.Outcome != idempotency.Duplicate || f.Counter(t, id) != 10 {
		t.Fatalf("redelivery after expiry = %+v, %v, counter %d; want duplicate, counter 10", res, err, f.Counter(t, id))
	}
}

func TestConsumer_an_OnReject_write_whose_condition_fails_is_an_invalid_effect(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.ConsumerFor(t, "marked", f.markedRouter())
	id := applytest.Unique(t)
	f.fill(t, id)
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "test.badreject", applytest.Counted{Counter: id, By: 1}))
	if !errors.Is(err, idempotency.ErrInvalidEffect) || !idempotency.IsPermanent(err) || res.Outcome != idempotency.Failed {
		t.Fatalf("= %+v, %v; want failed with a permanent EffectError", res, err)
	}
	if _, ok := f.Record(t, operator.Key("marked", id)); ok {
		t.Fatal("a record was written for an invalid rejection")
	}
}

func TestConsumer_refuses_nested_or_invalid_OnReject_writes_before_calling_dynamodb(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	add := f.Add(applytest.Counted{Counter: "c", By: 1})
	tests := []struct {
		name   string
		effect idempotency.Effect
	}{
		{"OnReject of an OnReject write", idempotency.Effect{add.OnReject(idempotency.Put(f.App, keyed("S")).OnReject(idempotency.Put(f.App, keyed("T"))))}},
		{"OnReject write without a table", idempotency.Effect{add.OnReject(idempotency.Put("", keyed("S")))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.Requests.Total()
			c := f.ConsumerFor(t, "refuse", idempotency.HandlerFunc(func(context.Context, cloudevent.Event) (idempotency.Effect, error) {
				return tt.effect, nil
			}))
			ev, _ := cloudevent.New(applytest.Unique(t), "test", "test.any", "g", time.Now(), map[string]int{})
			_, err := c.Apply(context.Background(), ev, port.Delivery{})
			if !errors.Is(err, idempotency.ErrInvalidEffect) || f.Requests.Total() != before {
				t.Fatalf("err = %v after %d calls; want an invalid effect before any call", err, f.Requests.Total()-before)
			}
		})
	}
}
