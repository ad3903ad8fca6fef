package main

import (
	"strings"
	"testing"
)

// backstopReceives is the LedgerQueue's maxReceiveCount in these tests: the backstop holds a
// message's group on its 3rd and 4th receives, then SQS moves it.
const backstopReceives = 4

// A poison event crashes the function (every invocation that takes it times out): the
// backstop holds its account on its last receives, SQS moves it, and the runbook's operator
// discards its letter, which frees the account. Then the event comes back (a producer's
// re-send), still crashing the function. It was decided: it must be answered before its
// handler can crash anything again, so that the backstop never holds the account behind it
// and SQS never moves it; the account's next movement is applied.
func TestRecovery_a_discarded_event_that_crashes_the_function_does_not_hold_its_group_again(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	f := c.pipeline(t, pipelineConfig{MaxReceiveCount: backstopReceives})
	f.set(f.hanging, true, "x")
	f.sendNew(t, "acct", "x")
	f.consume(t) // every invocation killed, until SQS moves x
	if _, ok := f.hold(t, "acct"); !ok || f.letters(t) != 1 {
		t.Fatalf("after x crashed every invocation: held %v, %d letters; want the account held behind x and x moved by SQS", ok, f.letters(t))
	}
	if code, out := f.cli(t, "dlq", "discard", "--why", "crashes the function", "x"); code != 0 || !strings.Contains(out, "not held") {
		t.Fatalf("dlq discard: exit %d; want x recorded as discarded, its letter deleted and the account free", code)
	}

	f.send(t, "acct", "x", "x-sent-again", map[string]int{"amount": 5}) // the producer sends it again
	f.sendNew(t, "acct", "e2")
	f.consume(t)

	f.wantSettled(t, "acct", "after the discarded x came back,", "e2")
	f.wantDiscardable(t, "x")
}

// A copy of a discarded event reaches its last receives before it is answered (the answers of
// its first invocations were lost): the backstop holds its account naming it, by message id,
// before it is handled. Answered then as the discarded event it is (malformed, or failing as
// when it was discarded), it must take its backstop entry off: the account goes on, and its
// next movement is applied, not dead-lettered "held behind event """.
func TestRecovery_a_discarded_events_copy_held_by_the_backstop_is_released_when_it_is_answered(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"malformed", "failing"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			f := c.pipeline(t, pipelineConfig{MaxReceiveCount: backstopReceives})
			f.set(map[string]map[string]bool{"malformed": f.malformed, "failing": f.failing}[kind], true, "x")
			f.sendNew(t, "acct", "x")
			f.consume(t)
			if code, out := f.cli(t, "dlq", "discard", "--why", "producer bug", "x"); code != 0 || !strings.Contains(out, "not held") {
				t.Fatalf("dlq discard: exit %d; want x recorded as discarded, its letter deleted and the account free", code)
			}

			f.loseAnswers("x", backstopReceives-2) // answered, but the answers lost: received again
			f.send(t, "acct", "x", "x-sent-again", map[string]int{"amount": 5})
			f.consume(t)
			f.sendNew(t, "acct", "e2")
			f.consume(t)

			f.wantSettled(t, "acct", "after the discarded x came back,", "e2")
		})
	}
}
