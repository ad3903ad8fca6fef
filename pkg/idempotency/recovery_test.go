package idempotency_test

import (
	"slices"
	"testing"

	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

// heldBehindA dead-letters a (failing) and b (held behind it) of group g, then heals a.
func heldBehindA(t *testing.T, r *recovery) (a, b string) {
	t.Helper()
	a, b = t.Name()+"-a", t.Name()+"-b"
	r.fail(a)
	r.send(t, "g", a, b)
	r.consume(t)
	r.wantApplied(t, "g")
	if n := r.letters(t); n != 2 {
		t.Fatalf("dead-letter queue holds %d letters; want a and b", n)
	}
	r.heal()
	return a, b
}

// Releasing the blocker must not release the messages held behind it: after a redrive of the
// blocker alone, a live message of the group waits behind the held one still dead-lettered,
// and a later redrive applies the group in order.
func TestRecovery_a_group_stays_held_until_its_whole_held_tail_is_applied(t *testing.T) {
	t.Parallel()
	r := newRecovery(t)
	a, b := heldBehindA(t, r)
	r.redrive(t, dlq.RedriveConfig{Limit: 1}, nil) // a only: b stays dead-lettered
	r.consume(t)
	r.wantApplied(t, "g", a)

	f := t.Name() + "-f"
	r.send(t, "g", f)
	r.consume(t)
	r.wantApplied(t, "g", a) // f waits behind b

	r.redrive(t, dlq.RedriveConfig{}, nil)
	r.consume(t)
	r.wantApplied(t, "g", a, b, f)
	if n := r.letters(t); n != 0 {
		t.Errorf("dead-letter queue holds %d letters after the redrive; want none", n)
	}
	if h, ok, err := r.admin.Hold(t.Context(), r.consumer, "g"); err != nil || ok {
		t.Errorf("hold after the tail was applied = %+v, %v, %v; want none", h, ok, err)
	}
}

// A full redrive with live traffic of the group between its sends applies the group in its
// order: the live message sent after the blocker was applied waits for the held tail, and
// every redriven letter is sent (none dropped by the broker's deduplication window). The live
// message, held and dead-lettered while the redrive runs, is left in place (late: nobody has
// looked at it), and the next redrive sends it.
func TestRecovery_full_redrive_with_live_traffic_between_its_sends_keeps_order(t *testing.T) {
	t.Parallel()
	r := newRecovery(t)
	a, b := heldBehindA(t, r)
	f := t.Name() + "-f"
	sentF := false
	outcomes := r.redrive(t, dlq.RedriveConfig{}, func(d dlq.Redriven) {
		if d.Letter.EventID != a || sentF {
			return
		}
		r.consume(t) // a is applied
		r.send(t, "g", f)
		sentF = true
		r.consume(t)
	})
	r.consume(t)
	r.wantApplied(t, "g", a, b)
	if got := outcomes[f]; !slices.Equal(got, []dlq.Outcome{dlq.Late}) {
		t.Errorf("redrive of %s, dead-lettered while it ran: %v; want late", f, got)
	}
	r.redrive(t, dlq.RedriveConfig{}, nil)
	r.consume(t)
	r.wantApplied(t, "g", a, b, f)
	for _, id := range []string{a, b} {
		if got := outcomes[id]; !slices.Contains(got, dlq.Moved) {
			t.Errorf("redrive of %s: %v; want moved", id, got)
		}
	}
	if n := r.letters(t); n != 0 {
		t.Errorf("dead-letter queue holds %d letters after the redrive; want none", n)
	}
}
