package idempotency_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
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
