package sqsbatch_test

import (
	"slices"
	"testing"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A batch that crashes after its dead-letter sends (its response lost) is delivered again:
// each message's letter was sent, so none is sent a second time (SQS's five minutes of
// deduplication of a letter may have passed by then), and each is acknowledged. A redrive's
// copy is a message of its own: failing again, it has a letter of its own.
func TestProcessor_a_message_delivered_again_after_its_letter_was_sent_is_not_dead_lettered_again(t *testing.T) {
	t.Parallel()
	r := newRedrive(t)
	r.malformed[r.eventID(t, "a/1")] = true
	p := r.processor(t, testkit.Table(t, r.db, "idem", "pk"), sqsbatch.Config{}, idempotency.HoldGroup)
	q := newFIFOQueue(t, backstop, "a/1", "a/2")

	first := q.receive()
	if resp := handle(t, p, t.Context(), first); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("first delivery: failures %v; want a/1 and a/2 dead-lettered and acknowledged", resp.BatchItemFailures)
	}
	// The invocation crashed before its response: nothing is deleted, both come again.
	if got := q.drain(t, p); got != 1 {
		t.Errorf("drained in %d batches; want 1 (both messages acknowledged on their second delivery)", got)
	}
	if want := []string{"a/1", "a/2"}; !slices.Equal(r.deadIDs(), want) {
		t.Errorf("dead-lettered %v; want %v: one letter per message, none again on its second delivery", r.deadIDs(), want)
	}

	// The operator redrives both letters: a/1 is still refused, a/2 is held behind it again.
	q.send(t, "a/1@r-1")
	q.send(t, "a/2@r-2")
	q.drain(t, p)
	if want := []string{"a/1", "a/2", "r-1", "r-2"}; !slices.Equal(r.deadIDs(), want) {
		t.Errorf("dead-lettered %v; want %v: each redriven copy has a letter of its own", r.deadIDs(), want)
	}
	if got := r.applied(t, "a"); len(got) != 0 {
		t.Errorf("group a applied %v; want nothing while held behind a/1", got)
	}
}
