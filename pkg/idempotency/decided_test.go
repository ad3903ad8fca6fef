package idempotency_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/operator"
)

// A redelivery (received before, or redriven) of an event an operator decided meanwhile is
// answered from its record before its handler runs: a handler that fails, or crashes the
// function, every time it runs is never run again.
func TestConsumer_a_redelivery_of_a_decided_event_is_answered_before_its_handler_runs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	name := "preread-" + counter
	var runs atomic.Int64
	c := f.ConsumerFor(t, name, idempotency.HandlerFunc(func(context.Context, cloudevent.Event) (idempotency.Effect, error) {
		runs.Add(1)
		return nil, errors.New("the handler cannot succeed")
	}), holding)
	msg := applytest.Message(t, "m-x", counter+"-x", "test.counted", applytest.Counted{Counter: counter, By: 1})
	if _, err := operator.New(f.DB, f.Records).Discard(ctx, operator.Discard{Consumer: name, EventID: counter + "-x", MessageID: "m-x",
		Group: "group-1", Body: msg.Body, By: "ops", Why: "cannot succeed"}); err != nil {
		t.Fatal(err)
	}
	for what, m := range map[string]events.SQSMessage{"received again": applytest.Redelivered(msg, 2), "redriven": applytest.Redriven(msg, "m-x-redriven")} {
		if res, err := applytest.Process(ctx, c, m); err != nil || res.Outcome != idempotency.Duplicate || res.Stored != idempotency.Discarded {
			t.Errorf("%s = %+v, %v; want a duplicate of the discard", what, res, err)
		}
	}
	if got := runs.Load(); got != 0 {
		t.Errorf("the handler ran %d times; want never: the record answers a redelivery first", got)
	}
}

// A message an operator discarded by the message itself (a body that is no event; a
// conflict, whose event's record is another payload's) is answered when it fails again:
// HoldGroup's transaction checks the discard recorded under the message, so the message holds
// its group no more. Else, delivered again after its discard, it would be held and
// dead-lettered again, its letter dropped by SQS as a repeat: the group held behind a message
// no letter shows.
func TestConsumer_HoldGroup_of_a_message_discarded_by_its_id_holds_nothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	a := operator.New(f.DB, f.Records)
	t.Run("undecodable", func(t *testing.T) {
		name := "bymsg-" + applytest.Unique(t)
		c := f.ConsumerFor(t, name, f.Router(), holding)
		if _, err := a.Discard(ctx, operator.Discard{Consumer: name, MessageID: "m-u", Group: "group-1", Body: "not an event", By: "ops", Why: "unreadable"}); err != nil {
			t.Fatal(err)
		}
		if err := engineOf(c).HoldGroup(ctx, "group-1", holdlist.Held{MessageID: "m-u"}, errors.New("undecodable")); !errors.Is(err, engine.ErrDecided) {
			t.Errorf("HoldGroup of the discarded message = %v; want ErrDecided", err)
		}
		if h, ok, err := a.Hold(ctx, name, "group-1"); err != nil || ok && len(h.Held) > 0 {
			t.Errorf("hold = %+v, %v; want nothing held", h.Held, err)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		counter := applytest.Unique(t)
		name := "bymsg-" + counter
		c := f.ConsumerFor(t, name, f.Router(), holding)
		first := applytest.Message(t, "m-a", counter+"-a", "test.counted", applytest.Counted{Counter: counter, By: 1})
		if res, err := applytest.Process(ctx, c, first); err != nil || res.Outcome != idempotency.Applied {
			t.Fatalf("a = %+v, %v; want applied", res, err)
		}
		conflict := applytest.Message(t, "m-c", counter+"-a", "test.counted", applytest.Counted{Counter: counter, By: 5})
		if _, err := a.Discard(ctx, operator.Discard{Consumer: name, EventID: counter + "-a", MessageID: "m-c", Group: "group-1", Body: conflict.Body, By: "ops", Why: "reused id"}); err != nil {
			t.Fatal(err)
		}
		ev := mustDecode(t, conflict)
		held := holdlist.Held{EventID: ev.ID, MessageID: "m-c", PayloadHash: ev.PayloadHash()}
		if err := engineOf(c).HoldGroup(ctx, "group-1", held, errors.New("conflict")); !errors.Is(err, engine.ErrDecided) {
			t.Errorf("HoldGroup of the discarded conflict = %v; want ErrDecided", err)
		}
		if h, ok, err := a.Hold(ctx, name, "group-1"); err != nil || ok && len(h.Held) > 0 {
			t.Errorf("hold = %+v, %v; want nothing held", h.Held, err)
		}
	})
}

// A held entry is one message: by the id it was first sent as, or by event id and payload
// hash. A duplicate of an applied event, answered and taken off the hold, leaves the entry of
// a conflict held under the same event id (another payload) where it is: the group stays held
// behind the conflict until an operator decides it.
func TestConsumer_a_duplicate_leaves_a_held_conflict_of_its_event_id_held(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	name := "identity-" + counter
	c := f.ConsumerFor(t, name, f.Router(), holding)
	msg := func(id, suffix string, by int) events.SQSMessage {
		return applytest.Message(t, id, counter+suffix, "test.counted", applytest.Counted{Counter: counter, By: by})
	}
	if res, err := applytest.Process(ctx, c, msg("m-a", "-a", 1)); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("a = %+v, %v; want applied", res, err)
	}
	ev := mustDecode(t, msg("m-c", "-a", 5))
	if _, err := applytest.Process(ctx, c, msg("m-c", "-a", 5)); !errors.Is(err, idempotency.ErrConflict) {
		t.Fatalf("c, reusing a's id = %v; want a conflict", err)
	}
	if err := engineOf(c).HoldGroup(ctx, "group-1", holdlist.Held{EventID: ev.ID, MessageID: "m-c", PayloadHash: ev.PayloadHash()}, errors.New("conflict")); err != nil {
		t.Fatal(err)
	}
	if res, err := applytest.Process(ctx, c, applytest.Redelivered(msg("m-a", "-a", 1), 2)); err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("a received again = %+v, %v; want a duplicate", res, err)
	}
	if _, err := applytest.Process(ctx, c, msg("m-d", "-d", 2)); !errors.Is(err, idempotency.ErrHeld) {
		t.Errorf("d after a's duplicate = %v; want held behind the conflict", err)
	}
	if got := f.Counter(t, counter); got != 1 {
		t.Errorf("counter = %d; want 1 (a alone)", got)
	}
}

// The cache answers a delivery only when its group's hold cannot list it: a message received
// again (or redriven, or held by the backstop in its batch) whose event this environment saw
// applied under another message id is answered from its record instead, and takes its own
// entry off the hold (the backstop's, by its message id). Answered from the cache, it would
// leave that entry, and its group held behind an event that is applied.
func TestConsumer_the_cache_does_not_answer_a_message_its_hold_may_list(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	name := "cache-" + counter
	c := f.ConsumerFor(t, name, f.Router(), func(c *idempotency.Config) { c.AfterDeadLetter = idempotency.HoldGroup; c.CacheSize = 100 })
	msg := func(id, suffix string) events.SQSMessage {
		return applytest.Message(t, id, counter+suffix, "test.counted", applytest.Counted{Counter: counter, By: 1})
	}
	if res, err := applytest.Process(ctx, c, msg("m-a2", "-a")); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("a, re-sent as m-a2 = %+v, %v; want applied (and cached)", res, err)
	}
	if err := engineOf(c).HoldMessages(ctx, "group-1", []holdlist.Held{{MessageID: "m-a"}}); err != nil {
		t.Fatal(err) // the backstop listed a's first message on its last receives
	}
	if res, err := applytest.Process(ctx, c, applytest.Redelivered(msg("m-a", "-a"), 2)); err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("a's first message received again = %+v, %v; want a duplicate", res, err)
	}
	if res, err := applytest.Process(ctx, c, msg("m-b", "-b")); err != nil || res.Outcome != idempotency.Applied {
		t.Errorf("b = %+v, %v; want applied: the duplicate took its entry off", res, err)
	}
}
