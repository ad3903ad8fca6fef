package sqsbatch_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// failingFirst is the redrive consumer whose Decide fails the first tries of some events, then
// succeeds: a cause that is fixed meanwhile.
type failingFirst struct {
	*redrive
	mu    *sync.Mutex
	fails map[string]int // event id -> tries left to fail
}

func (h failingFirst) Decide(ctx context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
	h.mu.Lock()
	left := h.fails[ev.ID]
	h.fails[ev.ID] = max(left-1, 0)
	h.mu.Unlock()
	if left > 0 {
		return nil, fmt.Errorf("downstream throttled (%s)", ev.ID)
	}
	return h.redrive.Decide(ctx, ev)
}

// The producer sends a/1 again (a new message id, the same event) while a/1's first message is
// on its last receives: the backstop holds the group behind both, in batch order, by message id.
// The first fails and is dead-lettered (its entry learns its event); its cause is fixed; the
// re-send is applied. The same event as the head, its commit takes the head off, and must take
// its own entry off too: else the group stays held behind a message already applied, which no
// letter shows (found by the recovery model, scenario 12), and a/2 with it.
func TestBackstop_a_resend_applied_behind_its_blocker_leaves_nothing_held(t *testing.T) {
	const maxReceiveCount = 4
	r := newRedrive(t)
	h := failingFirst{redrive: r, mu: &sync.Mutex{}, fails: map[string]int{r.eventID(t, "a/1"): 1}}
	records := testkit.Table(t, r.db, "idem", "pk")
	p, err := sqsbatch.NewConsumer(r.db, h, idempotency.Config{Name: "ledger", Table: records,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), AfterDeadLetter: idempotency.HoldGroup},
		sqsbatch.Config{Options: batch.Options{DeadLetter: r, MaxAttempts: 1}, MaxReceiveCount: maxReceiveCount})
	if err != nil {
		t.Fatal(err)
	}
	q := newFIFOQueue(t, maxReceiveCount, "a/1")
	for range maxReceiveCount - batch.BackstopReceives { // answers lost: received again
		q.receive()
	}
	q.send(t, "a/1+a/1-resent")
	q.drain(t, p)
	admin := operator.New(r.db, records)
	if !slices.Contains(r.deadIDs(), "a/1") {
		t.Fatalf("dead-lettered %v; want a/1, which failed on its last receives", r.deadIDs())
	}
	if got, want := r.applied(t, "a"), []string{r.eventID(t, "a/1")}; !slices.Equal(got, want) {
		t.Fatalf("group a applied %v; want %v, by its re-send", got, want)
	}
	if hold, ok, err := admin.Hold(t.Context(), "ledger", "a"); err != nil || ok {
		t.Errorf("after a/1's re-send was applied group a is held behind %+v (%v, %v); want nothing held", hold.Held, ok, err)
	}

	q.send(t, "a/2")              // live traffic
	q.send(t, "a/1@a/1-redriven") // the runbook: a/1's letter redriven, a duplicate now
	q.drain(t, p)
	if got, want := r.applied(t, "a"), []string{r.eventID(t, "a/1"), r.eventID(t, "a/2")}; !slices.Equal(got, want) {
		t.Errorf("group a applied %v; want %v", got, want)
	}
	if hold, ok, err := admin.Hold(t.Context(), "ledger", "a"); err != nil || ok {
		t.Errorf("after the redrive group a is held behind %+v (%v, %v); want nothing held", hold.Held, ok, err)
	}
}
