package idempotency_test

import (
	"context"
	"errors"
	"testing"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// A message's failures are counted per SQS message: a copy of the event sent again (a
// redrive sends a new message) starts from 1, and
// MessageFailures answers for the message it is asked about only.
func TestConsumer_counts_failures_per_message(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter")
	ctx, id := context.Background(), applytest.Unique(t)
	for _, step := range []struct {
		msg       string
		want, tot int
	}{{"m1", 1, 1}, {"m1", 2, 2}, {"m2", 1, 3}, {"m2", 2, 4}} {
		n, err := engineOf(c).CountMessageFailure(ctx, cloudevent.Event{ID: id}, port.Delivery{MessageID: step.msg}, errors.New("failed"))
		if err != nil || n != step.want {
			t.Fatalf("CountMessageFailure(%s) = %d, %v; want %d", step.msg, n, err, step.want)
		}
	}
	if n, err := engineOf(c).CountMessageFailure(ctx, cloudevent.Event{ID: id}, port.Delivery{MessageID: "m2"}, errors.New("last")); err != nil || n != 3 {
		t.Errorf("CountMessageFailure(m2) = %d, %v; want 3", n, err)
	}
	for msg, want := range map[string]int{"m1": 0, "m2": 3} {
		n, last, err := engineOf(c).MessageFailures(ctx, id, msg)
		if err != nil || n != want {
			t.Errorf("MessageFailures(%s) = %d, %v; want %d", msg, n, err, want)
		}
		if want > 0 && last != "last" {
			t.Errorf("MessageFailures(%s) last error %q; want %q", msg, last, "last")
		}
	}
}

// A failure of an event its consumer has decided (here an operator's discard, then a first
// delivery of its message whose handler fails) is not counted: the count's transaction checks
// the record, and the event is answered from it (ErrDecided), so it is never held or
// dead-lettered for failures that no longer matter.
func TestConsumer_a_failure_of_a_decided_event_is_answered_not_counted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	name := "decidedcount-" + counter
	c := f.Consumer(t, name, holding)
	msg := applytest.Message(t, "m-x", counter+"-x", "test.counted", applytest.Counted{Counter: counter, By: 1})
	a := operator.New(f.DB, f.Records)
	if _, err := a.Discard(ctx, operator.Discard{Consumer: name, EventID: counter + "-x", MessageID: "m-x", Group: "group-1", Body: msg.Body, By: "ops", Why: "bad"}); err != nil {
		t.Fatal(err)
	}
	ev := mustDecode(t, msg)
	if n, err := engineOf(c).CountMessageFailure(ctx, ev, sqsbatch.DeliveryOf(msg), errors.New("failed")); !errors.Is(err, engine.ErrDecided) || n != 0 {
		t.Errorf("CountMessageFailure of a discarded event = %d, %v; want 0, ErrDecided", n, err)
	}
	if at, ok, err := a.Attempts(ctx, name, ev.ID); err != nil || ok {
		t.Errorf("attempts = %+v, %v, %v; want none counted", at, ok, err)
	}
}
