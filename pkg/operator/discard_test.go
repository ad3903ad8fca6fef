package operator_test

import (
	"context"
	"errors"
	"testing"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/operator"
)

// Discarding a message in the middle of a held list takes it off there: the head and the
// message after it are applied in order, and the discarded one, redelivered, is a duplicate.
func TestAdmin_Discard_takes_a_message_off_the_middle_of_the_held_list(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := unique(t)
	name := "discard-" + counter
	c := f.consumer(t, name, holding)
	a := operator.New(f.db, f.records)
	if err := engineOf(c).HoldGroup(ctx, "group-1", holdlist.Held{EventID: counter + "-a", MessageID: "m1"}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	send := func(suffix string, by int) (idempotency.Result, error) {
		return process(ctx, c, message(t, "m"+suffix, counter+suffix, "test.counted", counted{Counter: counter, By: by}))
	}
	for _, s := range []string{"-b", "-c"} {
		if _, err := send(s, 2); !errors.Is(err, idempotency.ErrHeld) {
			t.Fatalf("%s: %v; want held", s, err)
		}
	}
	letter := message(t, "m-b", counter+"-b", "test.counted", counted{Counter: counter, By: 2}) // its body, as dead-lettered
	if _, err := a.Discard(ctx, operator.Discard{Consumer: name, EventID: counter + "-b", MessageID: "m-b", Group: "group-1",
		Body: letter.Body, By: "ops", Why: "bad"}); err != nil {
		t.Fatal(err)
	}
	h, ok, err := a.Hold(ctx, name, "group-1")
	if err != nil || !ok || len(h.Held) != 2 || h.Held[0].EventID != counter+"-a" || h.Held[1].EventID != counter+"-c" {
		t.Fatalf("hold after the discard = %+v, %v, %v; want a then c", h, ok, err)
	}
	if _, err := a.Discard(ctx, operator.Discard{Consumer: name, EventID: counter + "-b", Group: "group-1", Body: letter.Body, By: "ops", Why: "again"}); !errors.Is(err, operator.ErrDecided) {
		t.Errorf("a second discard = %v; want the event decided already (its letter a copy to delete)", err)
	}
	if res, err := send("-a", 1); err != nil || res.Outcome != idempotency.Applied {
		t.Errorf("a = %+v, %v; want applied", res, err)
	}
	if res, err := send("-b", 2); err != nil || res.Outcome != idempotency.Duplicate || res.Stored != idempotency.Discarded {
		t.Errorf("b redelivered = %+v, %v; want a duplicate of the discarded", res, err)
	}
	if res, err := send("-c", 2); err != nil || res.Outcome != idempotency.Applied {
		t.Errorf("c = %+v, %v; want applied", res, err)
	}
	if _, ok, _ := a.Hold(ctx, name, "group-1"); ok {
		t.Error("the group is still held after its list was applied")
	}
	if got := f.counter(t, counter); got != 3 {
		t.Errorf("counter = %d; want 3 (a and c, not b)", got)
	}
}

// A conflict's letter (an event id reused with another payload) discarded is recorded by its
// message too: the event's record, another payload's, answers nothing of it. Delivered again
// (its answer lost before the discard), the message is answered by that record of its message
// when it fails again, and holds its group no more; the event's own record is left as it was.
func TestAdmin_Discard_of_a_conflict_answers_its_message_delivered_again(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := unique(t)
	name := "conflict-" + counter
	c := f.consumer(t, name, holding)
	a := operator.New(f.db, f.records)
	if res, err := process(ctx, c, message(t, "m-a", counter+"-a", "test.counted", counted{Counter: counter, By: 1})); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("a = %+v, %v; want applied", res, err)
	}
	conflict := message(t, "m-c", counter+"-a", "test.counted", counted{Counter: counter, By: 5})
	if _, err := process(ctx, c, conflict); !errors.Is(err, idempotency.ErrConflict) {
		t.Fatalf("c, reusing a's id = %v; want a conflict", err)
	}
	ev, err := cloudevent.Decode([]byte(conflict.Body))
	if err != nil {
		t.Fatal(err)
	}
	held := holdlist.Held{EventID: ev.ID, MessageID: "m-c", PayloadHash: ev.PayloadHash()}
	if err := engineOf(c).HoldGroup(ctx, "group-1", held, errors.New("conflict")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Discard(ctx, operator.Discard{Consumer: name, EventID: ev.ID, MessageID: "m-c", Group: "group-1", Body: conflict.Body, By: "ops", Why: "reused id"}); err != nil {
		t.Fatal(err)
	}
	if _, err := process(ctx, c, redelivered(conflict, 2)); !errors.Is(err, idempotency.ErrConflict) {
		t.Fatalf("c received again = %v; want a conflict again (a's record stays)", err)
	}
	if err := engineOf(c).HoldGroup(ctx, "group-1", held, errors.New("conflict")); !errors.Is(err, engine.ErrDecided) {
		t.Errorf("HoldGroup of the discarded conflict received again = %v; want ErrDecided: its discard answers it", err)
	}
	if h, ok, err := a.Hold(ctx, name, "group-1"); err != nil || ok && len(h.Held) > 0 {
		t.Errorf("hold = %+v, %v; want nothing held behind the discarded conflict", h.Held, err)
	}
	if rec, ok, err := a.Record(ctx, name, ev.ID); err != nil || !ok || rec.Outcome != string(idempotency.Applied) {
		t.Errorf("a's record = %+v, %v, %v; want a's, applied", rec, ok, err)
	}
}
