package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/internal/testenv"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/operator"
)

func TestLeased_heartbeat_keeps_a_long_effect_lease_alive_past_the_lease_length(t *testing.T) {
	t.Parallel()
	f, r := newFixture(t), newReceiver(t)
	id := unique(t)
	msg := message(t, "m1", id, "test.counted", counted{Counter: id, By: 1})
	long := newGate(r)
	const length = time.Second
	start := time.Now()
	done := runHeld(f.leased(t, "notifier", nil, long, withLease(length, 100*time.Millisecond)), long, msg)
	// Wait (no fixed sleep: a loaded machine is slower) until the heartbeats have carried the
	// lease past three lease lengths from the start.
	testenv.Eventually(t, 30*time.Second, func() error {
		rec, _ := f.record(t, operator.Key("notifier", id))
		if past := start.Add(3 * length).UnixMilli(); rec.LeaseExpiresAt <= past {
			return fmt.Errorf("lease expires at %d, not yet past %d (three lease lengths); record %+v", rec.LeaseExpiresAt, past, rec)
		}
		return nil
	})

	res, err := process(context.Background(), f.leased(t, "notifier", nil, r.effect()), redelivered(msg, 2))
	if res.Outcome != idempotency.Failed || !errors.Is(err, lease.ErrHeld) {
		t.Errorf("delivery during the long effect = %+v, %v; want the lease still held", res, err)
	}
	close(long.open)
	if err := <-done; err != nil {
		t.Fatalf("long effect = %v; want applied", err)
	}
	if rec, _ := f.record(t, operator.Key("notifier", id)); rec.Status != operator.StatusCompleted {
		t.Errorf("record = %+v; want completed", rec)
	}
}

func TestLeased_without_heartbeat_the_effect_context_ends_with_the_lease(t *testing.T) {
	t.Parallel()
	f, r := newFixture(t), newReceiver(t)
	id := unique(t)
	msg := message(t, "m1", id, "test.counted", counted{Counter: id, By: 1})
	never := newGate(r) // never opened: only the lease can end it

	start := time.Now()
	res, err := process(context.Background(), f.leased(t, "notifier", nil, never, withLease(300*time.Millisecond, 0)), msg)
	if res.Outcome != idempotency.Failed || !errors.Is(err, context.DeadlineExceeded) || permanent(err) {
		t.Fatalf("effect past its lease = %+v, %v; want failed by the lease's deadline", res, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("effect ran %v; want it stopped at the 300ms lease", took)
	}
	if _, ok := f.record(t, operator.Key("notifier", id)); ok {
		t.Error("record still there; want it released")
	}
}

func TestLeased_losing_the_heartbeat_cancels_the_effect(t *testing.T) {
	t.Parallel()
	f, r := newFixture(t), newReceiver(t)
	id := unique(t)
	key := operator.Key("notifier", id)
	msg := message(t, "m1", id, "test.counted", counted{Counter: id, By: 1})
	stuck := newGate(r) // never opened: only a lost lease can end it
	done := runHeld(f.leased(t, "notifier", nil, stuck, withLease(time.Hour, 100*time.Millisecond)), stuck, msg)

	// The take-over's claim reaches DynamoDB only after one more heartbeat of the first owner,
	// as on a loaded machine: that heartbeat carries the first lease to its own time plus an
	// hour, after the take-over read its clock.
	heartbeatFirst := faulty(t, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if _, claim := in.Parameters.(*dynamodb.PutItemInput); claim {
			before, _ := f.record(t, key)
			testenv.Eventually(t, 30*time.Second, func() error {
				if now, _ := f.record(t, key); now.LeaseExpiresAt <= before.LeaseExpiresAt {
					return fmt.Errorf("no heartbeat yet: the lease still expires at %d", now.LeaseExpiresAt)
				}
				return nil
			})
		}
		return next.HandleInitialize(ctx, in)
	})
	// Its clock is two leases ahead: past every extension the first owner can make meanwhile.
	twoLeasesLater := func(c *lease.Config) { c.Now = func() time.Time { return time.Now().Add(2 * time.Hour) } }
	takeOver := f.leased(t, "notifier", heartbeatFirst, r.effect(), twoLeasesLater)
	if res, err := process(context.Background(), takeOver, redelivered(msg, 2)); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("take-over = %+v, %v; want applied", res, err)
	}
	taken, _ := f.record(t, key)
	select {
	case err := <-done:
		var lost *engine.LeaseLostError
		if !errors.As(err, &lost) || lost.Op != "heartbeat" || permanent(err) {
			t.Errorf("first owner = %v; want its heartbeat's LeaseLostError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the effect was not cancelled after its lease was lost")
	}
	if final, _ := f.record(t, key); final != taken {
		t.Errorf("record changed by the first owner:\n got %+v\nwant %+v", final, taken)
	}
}

func TestLeased_malformed_event_claims_nothing_and_makes_no_call(t *testing.T) {
	t.Parallel()
	f, r := newFixture(t), newReceiver(t)
	refusesMalformedEvents(t, f, f.leased(t, "notifier", nil, r.effect()))
	if n := len(r.Calls()); n != 0 {
		t.Errorf("receiver called %d times, want 0", n)
	}
}

func TestNewLeased_rejects_an_invalid_config(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  lease.Config
		want string
	}{
		{"heartbeat not shorter than the lease", lease.Config{Config: idempotency.Config{Name: "n", Table: "t"},
			Lease: time.Second, Heartbeat: time.Second}, "shorter than the lease"},
		{"negative wait", lease.Config{Config: idempotency.Config{Name: "n", Table: "t"},
			WaitForCompletion: -time.Second}, "wait for completion"},
		{"no name", lease.Config{Config: idempotency.Config{Table: "t"}}, "Config.Name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noop := lease.SideEffectFunc(func(context.Context, cloudevent.Event, string) error { return nil })
			_, err := lease.New(fakeDB{}, noop, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewLeased = %v; want an error mentioning %q", err, tt.want)
			}
		})
	}
}

// fakeDB satisfies idempotency.DB for tests that never reach DynamoDB.
type fakeDB struct{ idempotency.DB }
