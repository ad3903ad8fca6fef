package idempotency_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
)

// adder adds 1 to the counter of its event's id, whatever the data: applying it twice shows.
func (f *fixture) adder() idempotency.Handler {
	return idempotency.HandlerFunc(func(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Update(f.App, applytest.CounterKey(ev.ID), expression.Add(expression.Name("n"), expression.Value(1)))}, nil
	})
}

func order(id, data string) cloudevent.Event {
	return cloudevent.Event{SpecVersion: "1.0", ID: id, Source: "shop", Type: "order.placed", Subject: "c-1", Data: []byte(data)}
}

// A Go producer writes 10, a Python one re-publishing it 10.0, with its members in another
// order: one business event, a duplicate, never a conflict.
func TestConsumer_one_event_written_by_two_producers_is_a_duplicate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.ConsumerFor(t, "orders", f.adder())
	id := applytest.Unique(t)
	if res, err := c.Apply(context.Background(), order(id, `{"n":10,"sku":"é"}`), port.Delivery{MessageID: "go"}); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("first = %+v, %v; want applied", res, err)
	}
	res, err := c.Apply(context.Background(), order(id, `{"sku": "\u00e9", "n": 10.0}`), port.Delivery{MessageID: "python"})
	if err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("re-published = %+v, %v; want a duplicate", res, err)
	}
	if n := f.Counter(t, id); n != 1 {
		t.Errorf("applied %d times; want once", n)
	}
	if _, err := c.Apply(context.Background(), order(id, `{"n":11,"sku":"é"}`), port.Delivery{MessageID: "other"}); !errors.Is(err, idempotency.ErrConflict) {
		t.Errorf("another amount under the id: %v; want a conflict", err)
	}
}

// A record written before canonical JSON carries the hash of the data as written: its
// redelivery is a duplicate still (the decision for records without a hash version: either
// hash is the payload's), in the transactional mode and the lease mode alike.
func TestConsumer_a_record_written_before_canonical_JSON_answers_its_redelivery_as_a_duplicate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.ConsumerFor(t, "orders", f.adder())
	id := applytest.Unique(t)
	ev := order(id, `{"sku":"a","n":10}`) // members unsorted: the legacy hash is another
	if ev.LegacyPayloadHash() == ev.PayloadHash() {
		t.Fatal("legacy and canonical hash agree; the test needs a payload where they differ")
	}
	f.putRecord(t, operator.Record{Key: operator.Key("orders", id), Consumer: "orders", EventID: id, EventType: ev.Type,
		Outcome: string(idempotency.Applied), PayloadHash: ev.LegacyPayloadHash(), ExpiresAt: time.Now().Add(time.Hour).Unix()})
	res, err := c.Apply(context.Background(), ev, port.Delivery{MessageID: "again"})
	if err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("redelivery = %+v, %v; want a duplicate of the old record", res, err)
	}
	if n := f.Counter(t, id); n != 0 {
		t.Errorf("applied %d times; want never (the old record answers)", n)
	}
	if _, err := c.Apply(context.Background(), order(id, `{"sku":"a","n":11}`), port.Delivery{MessageID: "other"}); !errors.Is(err, idempotency.ErrConflict) {
		t.Errorf("another payload under the old record: %v; want a conflict", err)
	}
}

// A lease claimed before canonical JSON, whose owner is gone, is taken over by the same event:
// its side effect runs (once), never answered as a duplicate while nobody completed it.
func TestLeasedConsumer_takes_over_a_lease_claimed_before_canonical_JSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var runs atomic.Int64
	c, err := lease.New(f.DB, lease.SideEffectFunc(func(context.Context, cloudevent.Event, string) error {
		runs.Add(1)
		return nil
	}), lease.Config{Config: idempotency.Config{Name: "hooks", Table: f.Records, CacheSize: -1}, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	id := applytest.Unique(t)
	ev := order(id, `{"sku":"a","n":10}`)
	f.putRecord(t, operator.Record{Key: operator.Key("hooks", id), Consumer: "hooks", EventID: id, EventType: ev.Type,
		PayloadHash: ev.LegacyPayloadHash(), Status: operator.StatusInProgress, Owner: "gone",
		LeaseExpiresAt: time.Now().Add(-time.Minute).UnixMilli(), ExpiresAt: time.Now().Add(time.Hour).Unix()})
	res, err := c.Apply(context.Background(), ev, port.Delivery{MessageID: "again"})
	if err != nil || res.Outcome != idempotency.Applied || runs.Load() != 1 {
		t.Fatalf("redelivery = %+v, %v, %d runs; want the expired lease taken over and the effect run once", res, err, runs.Load())
	}
}

func (f *fixture) putRecord(t *testing.T, rec operator.Record) {
	t.Helper()
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.Records), Item: item}); err != nil {
		t.Fatal(err)
	}
}
