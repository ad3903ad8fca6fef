package idempotency_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// racing is a consumer named name, under HoldGroup, whose client runs race once, just before
// the first request that writes its hold once armed is set: an operator acting between two
// calls of the consumer.
func (f *fixture) racing(t *testing.T, name string, armed *atomic.Bool, race func(ctx context.Context) error) *idempotency.Consumer {
	t.Helper()
	var raced atomic.Bool
	db := applytest.Faulty(t, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if armed.Load() && fault.Writes(in.Parameters, "#hold#") && raced.CompareAndSwap(false, true) {
			if err := race(ctx); err != nil {
				return middleware.InitializeOutput{}, middleware.Metadata{}, err
			}
		}
		return next.HandleInitialize(ctx, in)
	})
	c, err := idempotency.New(db, f.Router(), idempotency.Config{Name: name, Table: f.Records, Logger: f.Logger,
		AfterDeadLetter: idempotency.HoldGroup, CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// discarding is an operator's discard of eventID's letter msg (by the consumer name), to race a
// consumer with.
func discarding(a *operator.Admin, name, eventID string, msg events.SQSMessage) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := a.Discard(ctx, operator.Discard{Consumer: name, EventID: eventID, MessageID: msg.MessageId, Group: "group-1",
			Body: msg.Body, By: "ops", Why: "bad"})
		return err
	}
}

// HoldGroup asks whether the event is decided in the transaction that writes the hold, not in
// a read before it: an operator's discard committed after any such read, just before the
// write, is met by the write's own check. The event is answered and nothing is held behind it.
// Were it held, its group would wait behind an event the operator discarded already, with no
// letter left to decide it.
func TestConsumer_HoldGroup_meets_a_discard_committed_just_before_its_write(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	name := "holdrace-" + counter
	msg := applytest.Message(t, "m-x", counter+"-x", "test.counted", applytest.Counted{Counter: counter, By: 1})
	ev := mustDecode(t, msg)
	var armed atomic.Bool
	armed.Store(true)
	a := operator.New(f.DB, f.Records)
	c := f.racing(t, name, &armed, discarding(a, name, ev.ID, msg))
	held := holdlist.Held{EventID: ev.ID, MessageID: "m-x", PayloadHash: ev.PayloadHash()}
	if err := engineOf(c).HoldGroup(ctx, "group-1", held, errors.New("failed 5 times")); !errors.Is(err, engine.ErrDecided) {
		t.Errorf("HoldGroup with a discard committed just before its write = %v; want ErrDecided", err)
	}
	if h, ok, err := a.Hold(ctx, name, "group-1"); err != nil || ok && len(h.Held) > 0 {
		t.Errorf("hold = %+v, %v; want nothing held behind the discarded event", h.Held, err)
	}
}

// passHold's join of a held group is one transaction with the check that the event is not
// decided: a record written between the commit the hold refused and the join (an operator's
// discard of the event) answers the event, a duplicate of the discard; it does not join the
// hold behind the blocker.
func TestConsumer_a_record_written_between_a_refused_commit_and_its_join_answers_the_event(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := applytest.Unique(t)
	name := "joinrace-" + counter
	msg := applytest.Message(t, "m-b", counter+"-b", "test.counted", applytest.Counted{Counter: counter, By: 2})
	ev := mustDecode(t, msg)
	var armed atomic.Bool
	a := operator.New(f.DB, f.Records)
	c := f.racing(t, name, &armed, discarding(a, name, ev.ID, msg))
	if err := engineOf(c).HoldGroup(ctx, "group-1", holdlist.Held{EventID: counter + "-a", MessageID: "m-a"}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	armed.Store(true) // the commit checks the hold without writing it: the race comes at the join
	res, err := applytest.Process(ctx, c, msg)
	if err != nil || res.Outcome != idempotency.Duplicate || res.Stored != idempotency.Discarded {
		t.Errorf("b, discarded between its refused commit and its join = %+v, %v; want a duplicate of the discard", res, err)
	}
	h, ok, err := a.Hold(ctx, name, "group-1")
	if err != nil || !ok || len(h.Held) != 1 || h.Held[0].EventID != counter+"-a" {
		t.Errorf("hold = %+v, %v, %v; want a alone: nothing held behind a discarded event", h.Held, ok, err)
	}
	if got := f.Counter(t, counter); got != 0 {
		t.Errorf("counter = %d; want 0: b discarded, a held", got)
	}
}
