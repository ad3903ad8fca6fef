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
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	long := newGate(r)
	const length = time.Second
	start := time.Now()
	done := runHeld(f.Leased(t, "notifier", nil, long, withLease(length, 100*time.Millisecond)), long, msg)
	// Wait (no fixed sleep: a loaded machine is slower) until the heartbeats have carried the
	// lease past three lease lengths from the start.
	testkit.Eventually(t, 30*time.Second, func() error {
		rec, _ := f.Record(t, operator.Key("notifier", id))
		if past := start.Add(3 * length).UnixMilli(); rec.LeaseExpiresAt <= past {
			return fmt.Errorf("lease expires at %d, not yet past %d (three lease lengths); record %+v", rec.LeaseExpiresAt, past, rec)
		}
		return nil
	})

	res, err := applytest.Process(context.Background(), f.Leased(t, "notifier", nil, r.Effect()), applytest.Redelivered(msg, 2))
	if res.Outcome != idempotency.Failed || !errors.Is(err, lease.ErrHeld) {
		t.Errorf("delivery during the long effect = %+v, %v; want the lease still held", res, err)
	}
	close(long.open)
	if err := <-done; err != nil {
		t.Fatalf("long effect = %v; want applied", err)
	}
	if rec, _ := f.Record(t, operator.Key("notifier", id)); rec.Status != operator.StatusCompleted {
		t.Errorf("record = %+v; want completed", rec)
	}
}

func TestLeased_without_heartbeat_the_effect_context_ends_with_the_lease(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	never := newGate(r) // never opened: only the lease can end it

	start := time.Now()
	res, err := applytest.Process(context.Background(), f.Leased(t, "notifier", nil, never, withLease(300*time.Millisecond, 0)), msg)
	if res.Outcome != idempotency.Failed || !errors.Is(err, context.DeadlineExceeded) || idempotency.IsPermanent(err) {
		t.Fatalf("effect past its lease = %+v, %v; want failed by the lease's deadline", res, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("effect ran %v; want it stopped at the 300ms lease", took)
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
	done := runHeld(f.Leased(t, "notifier", nil, stuck, withLease(time.Hour, 100*time.Millisecond)), stuck, msg)

	// The take-over's claim reaches DynamoDB only after one more heartbeat of the first owner,
	// as on a loaded machine: that heartbeat carries the first lease to its own time plus an
	// hour, after the take-over read its clock.
	heartbeatFirst := applytest.Faulty(t, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if _, claim := in.Parameters.(*dynamodb.PutItemInput); claim {
			before, _ := f.Record(t, key)
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
	twoLeasesLater := func(c *lease.Config) { c.Now = func() time.Time { return time.Now().Add(2 * time.Hour) } }
	takeOver := f.Leased(t, "notifier", heartbeatFirst, r.Effect(), twoLeasesLater)
	if res, err := applytest.Process(context.Background(), takeOver, applytest.Redelivered(msg, 2)); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("take-over = %+v, %v; want applied", res, err)
	}
	taken, _ := f.Record(t, key)
	select {
	case err := <-done:
		var lost *engine.LeaseLostError
		if !errors.As(err, &lost) || lost.Op != "heartbeat" || idempotency.IsPermanent(err) {
			t.Errorf("first owner = %v; want its heartbeat's LeaseLostError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the effect was not cancelled after its lease was lost")
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
