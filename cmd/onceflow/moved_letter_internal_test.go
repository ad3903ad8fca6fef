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
