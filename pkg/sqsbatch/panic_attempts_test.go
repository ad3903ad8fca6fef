package sqsbatch_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// panicking is the redrive consumer whose Decide panics for the events in panics, as a
// handler does on data it does not expect (a poison message).
type panicking struct {
	*redrive
	mu     sync.Mutex
	panics map[string]int // event id -> Decide calls, all of which panic
}

func (p *panicking) Decide(ctx context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
	p.mu.Lock()
	_, poison := p.panics[ev.ID]
	if poison {
		p.panics[ev.ID]++
	}
	p.mu.Unlock()
	if poison {
		var m map[string]int
		m[ev.ID] = 1 //nolint:staticcheck // a write to a nil map: the runtime panic under test
	}
	return p.redrive.Decide(ctx, ev)
}

// A message whose handler panics fails by its own processing: its attempts are counted like
// any other failure, so the engine dead-letters it after MaxAttempts, holds its group under
// HoldGroup, and the queue's redrive policy (a backstop that holds nothing) never moves it
// while the rest of its group goes on out of order.
func TestProcessor_counts_a_panicking_message_as_a_failed_attempt(t *testing.T) {
	r := newRedrive(t)
	h := &panicking{redrive: r, panics: map[string]int{r.eventID(t, "a/1"): 0}}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	p, err := sqsbatch.NewConsumer(r.db, h, idempotency.Config{Name: "ledger", Table: testkit.Table(t, r.db, "idem", "pk"),
		Logger: quiet, AfterDeadLetter: idempotency.HoldGroup}, sqsbatch.Config{Options: batch.Options{DeadLetter: r}})
	if err != nil {
		t.Fatal(err)
	}
	q := newFIFOQueue(t, backstop, "a/1", "a/2", "b/1")
	q.drain(t, p)

	if len(q.redriven) > 0 {
		t.Errorf("the queue's redrive policy moved %v; want the engine to dead-letter the panicking message", q.redriven)
	}
	if got := h.panics[r.eventID(t, "a/1")]; got != port.DefaultMaxAttempts {
		t.Errorf("a/1 tried %d times; want %d", got, port.DefaultMaxAttempts)
	}
	if want := []string{"a/1", "a/2"}; !slices.Equal(r.deadIDs(), want) {
		t.Errorf("dead-lettered %v; want %v (a/2 held behind a/1)", r.deadIDs(), want)
	}
	if got := r.applied(t, "a"); len(got) != 0 {
		t.Errorf("group a applied %v past its poison message; want nothing while held", got)
	}
	if got := r.applied(t, "b"); len(got) != 1 {
		t.Errorf("group b applied %v; want its message", got)
	}
}
