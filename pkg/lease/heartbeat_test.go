package lease_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/testkit"
)

func TestLeased_heartbeat_keeps_a_long_effect_lease_alive_past_the_lease_length(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	id := applytest.Unique(t)
	key := operator.Key("notifier", id)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	long := newGate(r)
	// The lease runs on a clock the test moves, a heartbeat at a time, once the previous
	// extension is written: a loaded machine's slow DynamoDB calls and pauses cost no lease.
	clk := applytest.NewClock(time.Now())
	const length, heartbeat = time.Second, 250 * time.Millisecond
	start := clk.Now()
	done := runHeld(t, f.Leased(t, "notifier", nil, long, withLease(length, heartbeat), lease.WithClock(clk)), long, msg)
	for clk.Now().Before(start.Add(3 * length)) {
		clk.Advance(heartbeat)
		want := clk.Now().Add(length).UnixMilli()
		testkit.Eventually(t, 30*time.Second, func() error {
			if rec, _ := f.Record(t, key); rec.LeaseExpiresAt < want {
				return fmt.Errorf("at %s the lease expires at %d, not yet extended to %d; record %+v", clk.Now(), rec.LeaseExpiresAt, want, rec)
			}
			return nil
		})
	}
	if rec, _ := f.Record(t, key); rec.LeaseExpiresAt <= start.Add(3*length).UnixMilli() {
		t.Fatalf("lease expires at %d, not past three lease lengths (%d); record %+v", rec.LeaseExpiresAt, start.Add(3*length).UnixMilli(), rec)
	}

	res, err := applytest.Process(minuteLeft(t), f.Leased(t, "notifier", nil, r.Effect(), lease.WithClock(clk)), applytest.Redelivered(msg, 2))
	if res.Outcome != idempotency.Failed || !errors.Is(err, lease.ErrHeld) {
		t.Errorf("delivery during the long effect = %+v, %v; want the lease still held", res, err)
	}
	close(long.open)
	if err := <-done; err != nil {
		t.Fatalf("long effect = %v; want applied", err)
	}
	if rec, _ := f.Record(t, key); rec.Status != operator.StatusCompleted {
		t.Errorf("record = %+v; want completed", rec)
	}
}

func TestLeased_without_heartbeat_the_effect_context_ends_with_the_lease(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	never := newGate(r)                   // never opened: only the lease can end it
	clk := applytest.NewClock(time.Now()) // the lease's clock: only the test moves it
	const length = 300 * time.Millisecond
	done := runHeld(t, f.Leased(t, "notifier", nil, never, withLease(length, 0), lease.WithClock(clk)), never, msg)

	clk.Advance(length - time.Millisecond)
	if never.ended() {
		t.Fatalf("the effect's context ended %v into its %v lease", length-time.Millisecond, length)
	}
	clk.Advance(time.Millisecond)
	if !never.ended() {
		t.Fatalf("the effect's context is live at the end of its %v lease", length)
	}
	if err := waitMoving(t, clk, 0, done); !errors.Is(err, context.DeadlineExceeded) || idempotency.IsPermanent(err) {
		t.Fatalf("effect past its lease = %v; want failed by the lease's deadline", err)
	}
	if _, ok := f.Record(t, operator.Key("notifier", id)); ok {
		t.Error("record still there; want it released")
	}
}

func TestLeased_losing_the_heartbeat_cancels_the_effect(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	id := applytest.Unique(t)
	key := operator.Key("notifier", id)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	stuck := newGate(r) // never opened: only a lost lease can end it
	// The first owner's lease runs on a clock the test moves: its heartbeats come when the
	// test says, however slow a loaded machine is, and its hour never runs out.
	clk := applytest.NewClock(time.Now())
	const heartbeat = 100 * time.Millisecond
	done := runHeld(t, f.Leased(t, "notifier", nil, stuck, withLease(time.Hour, heartbeat), lease.WithClock(clk)), stuck, msg)

	// The take-over's claim reaches DynamoDB only after one more heartbeat of the first owner,
	// as on a loaded machine: that heartbeat carries the first lease to its own time plus an
	// hour, after the take-over read its clock.
	heartbeatFirst := applytest.Faulty(t, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if _, claim := in.Parameters.(*dynamodb.PutItemInput); claim {
			before, _ := f.Record(t, key)
			clk.Advance(heartbeat)
			testkit.Eventually(t, 30*time.Second, func() error {
				if now, _ := f.Record(t, key); now.LeaseExpiresAt <= before.LeaseExpiresAt {
					return fmt.Errorf("no heartbeat yet: the lease still expires at %d", now.LeaseExpiresAt)
				}
				return nil
			})
		}
		return next.HandleInitialize(ctx, in)
	})
	// Its clock is two leases ahead: past every extension the first owner can make meanwhile.
	twoLeasesLater := func(c *lease.Config) { c.Now = func() time.Time { return clk.Now().Add(2 * time.Hour) } }
	takeOver := f.Leased(t, "notifier", heartbeatFirst, r.Effect(), twoLeasesLater)
	if res, err := applytest.Process(minuteLeft(t), takeOver, applytest.Redelivered(msg, 2)); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("take-over = %+v, %v; want applied", res, err)
	}
	taken, _ := f.Record(t, key)
	// The first owner's next heartbeat is refused. The test moves its clock on a heartbeat
	// at a time until the effect ends: a beat its busy heartbeat missed is given again.
	err := waitMoving(t, clk, heartbeat, done)
	var lost *engine.LeaseLostError
	if !errors.As(err, &lost) || lost.Op != "heartbeat" || idempotency.IsPermanent(err) {
		t.Errorf("first owner = %v; want its heartbeat's LeaseLostError", err)
	}
	if final, _ := f.Record(t, key); final != taken {
		t.Errorf("record changed by the first owner:\n got %+v\nwant %+v", final, taken)
	}
}

func TestLeased_malformed_event_claims_nothing_and_makes_no_call(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	applytest.RefusesMalformedEvents(t, f, f.Leased(t, "notifier", nil, r.Effect()))
	if n := len(r.Calls()); n != 0 {
		t.Errorf("receiver called %d times, want 0", n)
	}
}
