package main

import (
	"slices"
	"strings"
	"testing"
)

// The runbook's "failed 5 times" path when the blocker cannot be fixed now: hold skip lets the
// account go on past it, keeping its letter for later, then a redrive sends the held tail. A
// redrive sends a group's letters in their order, so the skipped letter goes first; whether it
// fails again (its cause still there) or succeeds (fixed meanwhile), the operator decided the
// account goes on past it: it must never hold the account again. The held tail and the live
// message after it are applied in their order, at once, and nothing is left held.
func TestRecovery_a_skipped_letter_redriven_rejoins_after_the_tail_without_holding_again(t *testing.T) {
	t.Parallel()
	for _, fixed := range []bool{false, true} {
		t.Run(map[bool]string{false: "it fails again", true: "fixed before the redrive"}[fixed], func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			f := c.pipeline(t, pipelineConfig{})
			const e1, e2, e3 = "e1", "e2", "e3"
			f.set(f.failing, true, e1)
			f.sendNew(t, "acct", e1, e2)
			f.consume(t)
			if h, ok := f.hold(t, "acct"); !ok || len(h.Held) != 2 || f.letters(t) != 2 {
				t.Fatalf("after e1 failed: hold %s, %d letters; want e1 and e2 held and dead-lettered", heldList(h), f.letters(t))
			}

			if code, out := f.cli(t, "hold", "skip", "--why", "refund by hand", "acct"); code != 0 || !strings.Contains(out, "now held behind event "+e2) {
				t.Fatalf("hold skip: exit %d; want the account held behind e2 next", code)
			}
			if fixed {
				f.set(f.failing, false, e1)
			}
			if code, out := f.cli(t, "dlq", "redrive"); code != 0 || !strings.Contains(out, "moved 2,") {
				t.Fatalf("dlq redrive: exit %d; want e1 and e2 moved", code)
			}
			f.consume(t)
			f.sendNew(t, "acct", e3) // live traffic after the redrive
			f.consume(t)

			got := f.applied(t, "acct")
			if rest := slices.DeleteFunc(slices.Clone(got), func(id string) bool { return id == e1 }); !slices.Equal(rest, []string{e2, e3}) || len(got)-len(rest) > 1 {
				t.Errorf("account applied %v; want e2 (the held tail), then e3 (live), at once, and e1 once at most: the skipped e1 holds nothing", got)
			}
			f.wantFree(t, "acct", "after the skip and the redrive,")
			if !fixed {
				if ls := f.inView(t); f.letters(t) != 1 || len(ls) != 1 || ls[0].EventID != e1 {
					t.Errorf("dead-letter queue holds %d letters, in view %s; want e1's letter alone, kept for later", f.letters(t), letterList(ls))
				}
				return
			}
			if f.letters(t) > 0 { // what is left is redriven once more, as the runbook says
				f.cli(t, "dlq", "redrive")
				f.consume(t)
			}
			if got := f.applied(t, "acct"); len(got) != 3 || !slices.Contains(got, e1) {
				t.Errorf("account applied %v; want e1, e2 and e3, each once", got)
			}
			f.wantFree(t, "acct", "at the end,")
			if n := f.letters(t); n != 0 {
				t.Errorf("at the end the dead-letter queue holds %d letters; want none", n)
			}
		})
	}
}

// The runbook redrives the group it decided: `dlq redrive --group` sends that account's letters
// and leaves another account's letter, which nobody has decided yet, where it is, for the next
// look (a letter that always came back while a redrive ran was otherwise never decided: the
// recovery model's scenario 13).
func TestRunbook_a_redrive_of_the_group_decided_leaves_another_groups_letter_in_place(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	f := c.pipeline(t, pipelineConfig{})
	f.set(f.failing, true, "a1", "b1")
	f.sendNew(t, "acct-a", "a1")
	f.sendNew(t, "acct-b", "b1")
	f.consume(t)
	if n := f.letters(t); n != 2 {
		t.Fatalf("after a1 and b1 failed: %d letters; want both dead-lettered", n)
	}

	f.set(f.failing, false, "a1") // a1's cause fixed; b1's letter not looked at yet
	if code, out := f.cli(t, "dlq", "redrive", "--group", "acct-a"); code != 0 || !strings.Contains(out, "moved 1,") {
		t.Fatalf("dlq redrive --group acct-a: exit %d; want a1 moved alone:\n%s", code, out)
	}
	f.consume(t)
	if got := f.applied(t, "acct-a"); !slices.Equal(got, []string{"a1"}) {
		t.Errorf("account a applied %v; want a1", got)
	}
	f.wantFree(t, "acct-a", "after its redrive,")
	if ls := f.inView(t); f.letters(t) != 1 || len(ls) != 1 || ls[0].EventID != "b1" {
		t.Errorf("dead-letter queue holds %d letters, in view %s; want b1's alone, left in place", f.letters(t), letterList(ls))
	}
	if h, ok := f.hold(t, "acct-b"); !ok || len(h.Held) != 1 {
		t.Errorf("account b: hold %s; want it still held behind b1, whose letter waits", heldList(h))
	}
}

// A message that crashes the function is skipped while it crash-loops (hold skip, at will): its
// letter is not in the dead-letter queue yet, so nothing moves it behind the others, and SQS
// then moves it and the message that shares its batches, in their order. The blocker the hold
// names is that second message, whose letter has nothing to fix; a redrive of the group sends
// the skipped letter first, and it takes the batch down with it again, for ever (the recovery
// model's scenario 18). The runbook decides the moved letter of a message skipped at will before
// the group's redrive, as any moved letter: discarded, or its cause fixed; then the redrive
// applies the rest and nothing is held or left.
//
// On AWS, x and e2 share each batch (a FIFO receive returns several of a group) and e2 fails
// with x's every invocation; the local queue hands out one message of a group at a time, so
// e2's invocations are killed while x hangs undecided (f.mates).
func TestRunbook_a_skipped_letter_the_queue_moved_is_decided_before_its_group_is_redriven(t *testing.T) {
	t.Parallel()
	for _, decision := range []string{"discarded", "fixed"} {
		t.Run(decision, func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			f := c.pipeline(t, pipelineConfig{MaxReceiveCount: backstopReceives})
			f.set(f.hanging, true, "x")
			f.sharesBatches("e2", "x")
			x := f.send(t, "acct", "x", "x", map[string]int{"amount": 5})
			e2 := f.send(t, "acct", "e2", "e2", map[string]int{"amount": 5})
			for range 2 * backstopReceives {
				if _, held := f.hold(t, "acct"); held {
					break
				}
				f.step(t)
			}
			if code, out := f.cli(t, "hold", "skip", "--why", "crashes the function", "acct"); code != 0 || !strings.Contains(out, "decide it before the group's redrive") {
				t.Fatalf("hold skip while x crash-loops: exit %d (%s); want x skipped, its letter not there yet and the operator told so", code, lastLines(out, 4))
			}
			f.consume(t) // until SQS moves x, then e2
			// hold get names e2 the blocker, and x as skipped, by the id its letter was sent as
			if h, ok := f.hold(t, "acct"); !ok || len(h.Held) != 1 || h.Held[0].MessageID != e2 || len(h.Skipped) != 1 || h.Skipped[0].MessageID != x {
				t.Fatalf("after SQS moved the batch: hold %s, skipped %v; want the account held behind e2, x skipped", heldList(h), h.Skipped)
			}
			if ls := f.inView(t); len(ls) != 1 || ls[0].OriginalMessage != x {
				t.Fatalf("in view %s; want x's letter, first sent as %s", letterList(ls), x)
			}
			f.crasherFirst(t, "x", "after SQS moved the batch:")

			// The blocker's letter (e2, nothing to fix) decided, the skipped one left for later:
			// the group's redrive sends x first, which takes e2's batch down again.
			f.wantLoop(t, "acct", "x", "with the skipped x first")

			// The runbook: the moved letter of the message skipped at will is decided first.
			want := []string{"e2"}
			if f.decideCrasher(t, "x", decision) {
				want = []string{"x", "e2"}
			}
			f.redriveRounds(t, "acct", "e3")
			f.wantSettled(t, "acct", "after x was "+decision+" and the group redriven,", append(want, "e3")...)
		})
	}
}
