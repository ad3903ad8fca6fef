package batchtest

import (
	"errors"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/idempotency"
)

func appliedOnce[R any](t *testing.T, e *env[R]) {
	p := e.port(t, idempotency.GoOn, Options{})
	recs := e.records(t, "a", 1, "b", 1, "a", 2)
	e.handle(t, "the batch", p, recs)
	e.expectApplied(t, "the batch", "a", []int{1, 2}, "b", []int{1})
	e.handle(t, "a record delivered again", p, e.all(recs[2:]))
	e.handle(t, "the batch delivered again", p, e.all(recs))
	e.expectApplied(t, "after the redeliveries", "a", []int{1, 2}, "b", []int{1})
}

func groupOrder[R any](t *testing.T, e *env[R]) {
	p := e.port(t, idempotency.GoOn, Options{})
	e.handle(t, "the batch", p, e.records(t, "a", 1, "b", 1, "a", 2, "c", 1, "b", 2, "a", 3, "b", 3, "a", 4))
	e.expectApplied(t, "the batch", "a", []int{1, 2, 3, 4}, "b", []int{1, 2, 3}, "c", []int{1})
}

// transient: a2 fails once; a3 waits behind it, b goes on; the redelivery applies a2, a3.
func transient[R any](t *testing.T, e *env[R], opts Options) {
	p := e.port(t, idempotency.GoOn, opts)
	recs := e.records(t, "a", 1, "b", 1, "a", 2, "b", 2, "a", 3, "b", 3)
	e.failOnce("a", 2, errors.New("downstream timed out"))
	failed := e.handle(t, "the batch", p, recs, 2, 4)
	e.expectApplied(t, "after a2's failure", "a", []int{1}, "b", []int{1, 2, 3})
	e.handle(t, "the redelivery", p, e.redelivery(recs, failed))
	e.expectApplied(t, "after the redelivery", "a", []int{1, 2, 3}, "b", []int{1, 2, 3})
}

// permanent: bad (of group a) can never succeed: it is dead-lettered with its reason and the
// batch is done with; under GoOn a's later events apply, under HoldGroup they are held
// (dead-lettered behind it), in this batch and the next; b goes on.
func permanent[R any](t *testing.T, e *env[R], policy idempotency.GroupPolicy, bad Message, reason string) {
	p := e.port(t, policy, Options{})
	recs := e.h.Records(t, e.event(t, "a", 1), e.event(t, "b", 1), bad, e.event(t, "b", 2), e.event(t, "a", 3))
	e.handle(t, "the batch", p, recs)
	next := e.records(t, "a", 4, "b", 3)
	e.handle(t, "the next batch", p, next)
	want, held := []int{1, 3, 4}, []R(nil)
	if policy == idempotency.HoldGroup {
		want, held = []int{1}, []R{recs[4], next[0]}
	}
	e.expectApplied(t, "after both batches", "a", want, "b", []int{1, 2, 3})
	letters := e.dead()
	if len(letters) != 1+len(held) {
		t.Fatalf("%d dead letters; want %d (the record that can never succeed, then the %d held behind it): %v", len(letters), 1+len(held), len(held), letters)
	}
	if id := e.h.Letter(recs[2]).MessageId; letters[0].msg.MessageId != id || !strings.Contains(letters[0].reason.Error(), reason) {
		t.Errorf("first letter %s, reason %q; want %s, its reason saying %q", letters[0].msg.MessageId, letters[0].reason, id, reason)
	}
	for i, r := range held {
		l := letters[1+i]
		if id := e.h.Letter(r).MessageId; l.msg.MessageId != id || !strings.Contains(l.reason.Error(), "held") {
			t.Errorf("letter %d %s, reason %q; want %s held behind the first", 1+i, l.msg.MessageId, l.reason, id)
		}
	}
}

// sinkFails: a2 can never succeed and its dead-letter send fails once: nothing is lost, a2 and
// the rest of its group are reported failed, not applied; the redelivery dead-letters a2 and
// goes on (GoOn) or holds a3 behind it (HoldGroup).
func sinkFails[R any](t *testing.T, e *env[R], policy idempotency.GroupPolicy) {
	p := e.port(t, policy, Options{})
	recs := e.records(t, "a", 1, "a", -2, "a", 3, "b", 1)
	e.failSinkOnce(errors.New("dead-letter queue unreachable"))
	failed := e.handle(t, "the batch", p, recs, 1, 2)
	e.expectApplied(t, "after the failed send", "a", []int{1}, "b", []int{1})
	if n := len(e.dead()); n != 0 {
		t.Fatalf("%d dead letters after the failed send; want none", n)
	}
	e.handle(t, "the redelivery", p, e.redelivery(recs, failed))
	want, letters := []int{1, 3}, 1
	if policy == idempotency.HoldGroup {
		want, letters = []int{1}, 2
	}
	e.expectApplied(t, "after the redelivery", "a", want, "b", []int{1})
	got := e.dead()
	if len(got) != letters || got[0].msg.MessageId != e.h.Letter(recs[1]).MessageId || !strings.Contains(got[0].reason.Error(), errNegative.Error()) {
		t.Errorf("dead letters %v; want %d, the first %s's for %q", got, letters, e.h.Letter(recs[1]).MessageId, errNegative)
	}
}

// duplicate: the event of a1, applied, comes again in a new record (a producer's retry).
func duplicate[R any](t *testing.T, e *env[R]) {
	p := e.port(t, idempotency.GoOn, Options{})
	e.handle(t, "the first record", p, e.records(t, "a", 1))
	e.handle(t, "a new record of the same event", p, e.records(t, "a", 1))
	e.expectApplied(t, "after the retry", "a", []int{1})
}
