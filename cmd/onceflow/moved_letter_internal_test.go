package main

import (
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
			f.sharesBatches("e1", "e2")
			f.send(t, "acct", "e2", "e2", map[string]int{"amount": 5}) // live, ahead of e1's redriven copy
			f.set(f.failing, false, "e1")                              // e1's cause fixed
			if code, out := f.cli(t, "dlq", "redrive", "--group", "acct"); code != 0 || !strings.Contains(out, "moved 1,") {
				t.Fatalf("dlq redrive of e1: exit %d (%s); want e1 moved", code, lastLines(out, 2))
			}
			f.consume(t) // until SQS moves e2, then e1's copy
			if h, ok := f.hold(t, "acct"); !ok || len(h.Held) == 0 || h.Held[0].MessageID != e1 {
				t.Fatalf("after SQS moved the batch: hold %s; want the account held behind e1", heldList(h))
			}
			f.crasherFirst(t, "e2", "after SQS moved the batch:")

			// e1's letter, the blocker's, has nothing to fix: decided again, the group's
			// redrive sends e2 first, which takes e1's batch down again.
			f.wantLoop(t, "acct", "e2", "with the blocker's letter decided again")

			// The runbook: the decision passes to the group's moved letter with a cause, e2's.
			want := []string{"e1"}
			if f.decideCrasher(t, "e2", decision) {
				want = append(want, "e2")
			}
			f.redriveRounds(t, "acct", "e3")
			f.wantSettled(t, "acct", "after e2 was "+decision+" and the group redriven,", append(want, "e3")...)
		})
	}
}
