package main

import (
	"fmt"
	"strings"
	"testing"
)

// A poison message crashes every invocation that takes it: the backstop holds its account,
// SQS moves it by its redrive policy (a letter that names no source queue), and the
// account's next movement is held and dead-lettered behind it. Once the cause is fixed, the
// runbook's dlq redrive sends the moved letter back to the dead-letter queue's source queue
// (the stack's queue whose redrive policy moved it), without --to, and the held movement after
// it: both applied, in order, nothing held.
func TestRecovery_a_letter_SQS_moved_is_redriven_to_its_source_queue_in_order(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	f := c.pipeline(t, pipelineConfig{MaxReceiveCount: backstopReceives})
	f.set(f.hanging, true, "x")
	f.sendNew(t, "acct", "x")
	f.consume(t) // every invocation killed, until SQS moves x
	f.sendNew(t, "acct", "e2")
	f.consume(t)
	if h, ok := f.hold(t, "acct"); !ok || len(h.Held) != 2 || f.letters(t) != 2 {
		t.Fatalf("after x crashed every invocation: hold %s, %d letters; want x and e2 held and in the dead-letter queue", heldList(h), f.letters(t))
	}

	f.set(f.hanging, false, "x") // the cause fixed
	if code, out := f.cli(t, "dlq", "redrive"); code != 0 || !strings.Contains(out, "moved 2,") || !strings.Contains(out, c.e.Queues["LedgerQueue"].URL) {
		t.Fatalf("dlq redrive: exit %d (%s); want x and e2 moved to LedgerQueue", code, lastLines(out, 2))
	}
	f.consume(t)
	f.wantSettled(t, "acct", "after the redrive,", "x", "e2")
}

// e1 fails and is dead-lettered, holding its account; its cause is fixed and its letter
// redriven, behind e2, a live message that crashes the function. e2 takes every batch down, e1's
// copy with it, and SQS moves both: e2's letter first, then e1's. The hold names e1, whose letter
// has nothing left to fix: deciding it again and redriving the group sends e2 first, and the
// batch goes down again, for ever (the recovery model's scenario 20). The runbook passes the
// decision to the group's moved letter that has a cause, e2's: discarded, or its cause fixed;
// then the group's redrive applies the rest, live traffic goes on, and nothing is held or left.
//
// On AWS, e2 and e1's copy share each batch (a FIFO receive returns several of a group); the
// local queue hands out one message of a group at a time, so e1's invocations are killed while
// e2 hangs undecided (f.mates).
func TestRunbook_a_moved_letter_with_nothing_to_fix_passes_the_decision_to_its_groups_crasher(t *testing.T) {
	t.Parallel()
	for _, decision := range []string{"discarded", "fixed"} {
		t.Run(decision, func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			f := c.pipeline(t, pipelineConfig{MaxReceiveCount: backstopReceives})
			f.set(f.failing, true, "e1")
			e1 := f.send(t, "acct", "e1", "e1", map[string]int{"amount": 5})
			f.consume(t)
			if h, ok := f.hold(t, "acct"); !ok || len(h.Held) != 1 || f.letters(t) != 1 {
				t.Fatalf("after e1 failed: hold %s, %d letters; want the account held behind e1, its letter", heldList(h), f.letters(t))
			}

			f.set(f.hanging, true, "e2")
			f.mu.Lock()
			f.mates["e1"] = "e2"
			f.mu.Unlock()
			f.send(t, "acct", "e2", "e2", map[string]int{"amount": 5}) // live, ahead of e1's redriven copy
			f.set(f.failing, false, "e1")                              // e1's cause fixed
			if code, out := f.cli(t, "dlq", "redrive", "--group", "acct"); code != 0 || !strings.Contains(out, "moved 1,") {
				t.Fatalf("dlq redrive of e1: exit %d (%s); want e1 moved", code, lastLines(out, 2))
			}
			e2First := func() (bool, string) {
				ls := f.inView(t)
				return f.letters(t) == 2 && len(ls) == 1 && ls[0].EventID == "e2", fmt.Sprintf("%d letters, in view %s", f.letters(t), letterList(ls))
			}
			f.consume(t) // until SQS moves e2, then e1's copy
			if h, ok := f.hold(t, "acct"); !ok || len(h.Held) == 0 || h.Held[0].MessageID != e1 {
				t.Fatalf("after SQS moved the batch: hold %s; want the account held behind e1", heldList(h))
			}
			if ok, got := e2First(); !ok {
				t.Fatalf("after SQS moved the batch: %s; want e2's letter first, then e1's", got)
			}

			// e1's letter, the blocker's, has nothing to fix: decided again, the group's
			// redrive sends e2 first, which takes e1's batch down again.
			if code, out := f.cli(t, "dlq", "redrive", "--group", "acct"); code != 0 || !strings.Contains(out, "moved 2,") {
				t.Fatalf("dlq redrive: exit %d (%s); want e2 and e1 moved", code, lastLines(out, 2))
			}
			f.consume(t)
			if got := f.applied(t, "acct"); len(got) != 0 {
				t.Fatalf("after the blocker's letter was decided again: applied %v; want nothing applied", got)
			}
			if ok, got := e2First(); !ok {
				t.Fatalf("after the blocker's letter was decided again: %s; want both letters back, e2's first", got)
			}

			// The runbook: the decision passes to the group's moved letter with a cause, e2's.
			want := []string{"e1"}
			if decision == "discarded" {
				if code, out := f.cli(t, "dlq", "discard", "--why", "crashes the function", "e2"); code != 0 {
					t.Fatalf("dlq discard e2: exit %d (%s)", code, lastLines(out, 3))
				}
			} else {
				f.set(f.hanging, false, "e2")
				want = append(want, "e2")
			}
			// rounds of the runbook: a letter held behind another is redriven once its blocker
			// is applied
			for round := 0; round < 3 && (round == 0 || f.letters(t) > 0); round++ {
				if code, out := f.cli(t, "dlq", "redrive", "--group", "acct"); code != 0 {
					t.Fatalf("dlq redrive: exit %d (%s)", code, lastLines(out, 2))
				}
				if round == 0 {
					f.sendNew(t, "acct", "e3") // live traffic, behind the redriven letters
				}
				f.consume(t)
			}
			f.wantSettled(t, "acct", "after e2 was "+decision+" and the group redriven,", append(want, "e3")...)
		})
	}
}
