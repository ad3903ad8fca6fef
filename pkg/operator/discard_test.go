package operator_test

import (
	"context"
	"errors"
	"testing"

	"github.com/onceflow/onceflow/pkg/idempotency"
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
