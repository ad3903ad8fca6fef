package sqsbatch_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// a/1 times out on every receive, a/2 comes behind it untried in every batch: the queue's
// redrive policy moves both (the backstop held the group behind a/1 only). a/3, live traffic,
// is held and dead-lettered by the engine. The operator fixes the cause and redrives the
// dead-letter queue in its order, a/1, a/2, a/3: the group must be applied in that order.
func TestBackstop_a_group_mate_the_queue_moves_with_its_blocker_keeps_its_place(t *testing.T) {
	r, h, p, q, records := movedByTheQueue(t, "a/1", true)
	q.send(t, "a/3")
	q.drain(t, p)
	if !slices.Equal(r.deadIDs(), []string{"a/3"}) {
		t.Fatalf("dead-lettered by the engine %v; want a/3, held", r.deadIDs())
	}
	hold, _, _ := operator.New(r.db, records).Hold(t.Context(), "ledger", "a")
	t.Logf("hold before the redrive: %v", hold.Held)

	delete(h.hangs, r.eventID(t, "a/1"))              // the cause is fixed
	for _, m := range []string{"a/1", "a/2", "a/3"} { // the redrive, in the dead-letter queue's order, new message ids
		q.send(t, m+"@"+m+"-redriven")
	}
	q.drain(t, p)
	want := []string{r.eventID(t, "a/1"), r.eventID(t, "a/2"), r.eventID(t, "a/3")}
	if got := r.applied(t, "a"); !slices.Equal(got, want) {
		t.Errorf("after the redrive group a applied %v; want %v (a/2 was before a/3 in the group)", got, want)
	}
}

// movedByTheQueue runs a/1 and a/2 of group a through a HoldGroup consumer with a backstop,
// every invocation timing out while it handles hang, until the queue's redrive policy (a
// maxReceiveCount of 4) has moved both. With settle, the batch's answer is applied; without,
// nothing of a batch is acknowledged, as when Lambda kills a timed-out invocation.
func movedByTheQueue(t *testing.T, hang string, settle bool) (*redrive, timingOut, *sqsbatch.Processor, *fifoQueue, string) {
	t.Helper()
	const maxReceiveCount = 4
	r := newRedrive(t)
	h := timingOut{redrive: r, hangs: map[string]bool{r.eventID(t, hang): true}}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	records := testkit.Table(t, r.db, "idem", "pk")
	p, err := sqsbatch.NewConsumer(r.db, h, idempotency.Config{Name: "ledger", Table: records, Logger: quiet,
		AfterDeadLetter: idempotency.HoldGroup, Retry: idempotency.Retry{Margin: 50 * time.Millisecond}},
		sqsbatch.Config{Options: batch.Options{DeadLetter: r, DeadlineMargin: 10 * time.Millisecond}, MaxReceiveCount: maxReceiveCount})
	if err != nil {
		t.Fatal(err)
	}
	q := newFIFOQueue(t, maxReceiveCount, "a/1", "a/2")
	timeout := functionTimeout(t, r, records)
	for range 3 * maxReceiveCount {
		ev := q.receive()
		if len(ev.Records) == 0 {
			break
		}
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		resp := handle(t, p, ctx, ev)
		if settle {
			q.settle(ev, resp)
		}
		cancel()
	}
	if !slices.Equal(q.redriven, []string{"a/1", "a/2"}) {
		t.Fatalf("the queue moved %v; want a/1 and a/2", q.redriven)
	}
	return r, h, p, q, records
}
