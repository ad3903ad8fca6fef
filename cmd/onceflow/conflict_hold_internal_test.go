package main

import (
	"strings"
	"testing"
)

// x is applied; the producer then reuses x's id for another payload: a conflict, held and
// dead-lettered, its account held until an operator decides on that letter. A duplicate of the
// applied x arriving meanwhile (a republish, a re-send after the five-minute window) is
// answered as a duplicate, and that must not decide the conflict's letter: the account stays
// held behind it, the next movement held after it, until the runbook's discard of the letter
// and redrive, which apply the rest in order and leave nothing held.
func TestRecovery_a_conflict_letter_keeps_its_group_held_through_duplicates_of_the_applied_event(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	f := c.pipeline(t, pipelineConfig{})
	f.send(t, "acct", "x", "x", map[string]int{"amount": 5})
	f.consume(t)
	f.send(t, "acct", "x", "x-reused", map[string]int{"amount": 50}) // the producer reuses the id
	f.consume(t)
	if _, ok := f.hold(t, "acct"); !ok || f.letters(t) != 1 {
		t.Fatalf("after the conflict: held %v, %d letters; want the account held behind the conflict's letter", ok, f.letters(t))
	}

	f.send(t, "acct", "x", "x-again", map[string]int{"amount": 5}) // a duplicate of the applied x
	f.sendNew(t, "acct", "e2")
	f.consume(t)
	f.wantApplied(t, "acct", "x")
	if h, ok := f.hold(t, "acct"); !ok {
		t.Errorf("after a duplicate of the applied x the account is free (%s), with the conflict's letter still undecided", heldList(h))
	}

	if code, out := f.cli(t, "dlq", "discard", "--why", "reused id", "x"); code != 0 || !strings.Contains(out, "deleted letter") {
		t.Errorf("dlq discard of the conflict's letter: exit %d", code)
	}
	f.cli(t, "dlq", "redrive")
	f.consume(t)
	f.wantSettled(t, "acct", "after the discard and the redrive,", "x", "e2")
}
