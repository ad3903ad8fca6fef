package lease_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// isExtension tells a lease extension (an UpdateItem setting only leaseExpiresAt) from a
// completion or an attempt count.
func isExtension(in any) bool {
	u, ok := in.(*dynamodb.UpdateItemInput)
	if !ok {
		return false
	}
	names := []string{}
	for _, n := range u.ExpressionAttributeNames {
		names = append(names, n)
	}
	return slices.Contains(names, "leaseExpiresAt") && !slices.Contains(names, "outcome")
}

// claimedUntil reads the lease expiry a claim's PutItem writes.
func claimedUntil(in any) (time.Time, bool) {
	p, ok := in.(*dynamodb.PutItemInput)
	if !ok {
		return time.Time{}, false
	}
	n, ok := p.Item["leaseExpiresAt"].(*types.AttributeValueMemberN)
	if !ok {
		return time.Time{}, false
	}
	ms, _ := strconv.ParseInt(n.Value, 10, 64)
	return time.UnixMilli(ms), true
}

// With a heartbeat, the effect's context ends when the lease does, however the extensions
// fail: refused by a hanging DynamoDB or failing at once. The effect may not outlive the
// lease it claimed (written in the record, the instant another owner may take it over). The
// lease runs on a clock the test moves, so the instant is exact on a loaded machine too.
func TestLeased_with_heartbeat_the_effect_ends_when_the_lease_does(t *testing.T) {
	t.Parallel()
	const length, heartbeat = time.Second, 250 * time.Millisecond
	tests := []struct {
		name      string
		extension func(ctx context.Context) error
	}{
		{"extension hangs", func(ctx context.Context) error {
			<-ctx.Done() // a hung connection: answers only when given up on
			return ctx.Err()
		}},
		{"extension fails", func(context.Context) error { return errors.New("throttled") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, r := applytest.New(t), applytest.NewReceiver(t)
			var until, extensions atomic.Int64
			db := applytest.Faulty(t, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if isExtension(in.Parameters) {
					extensions.Add(1)
					return middleware.InitializeOutput{}, middleware.Metadata{}, tt.extension(ctx)
				}
				if u, ok := claimedUntil(in.Parameters); ok {
					until.Store(u.UnixMilli())
				}
				return next.HandleInitialize(ctx, in)
			})
			id := applytest.Unique(t)
			msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
			never := newGate(r) // never opened: only the end of its lease can end it
			clk := applytest.NewClock(time.Now())
			done := runHeld(t, f.Leased(t, "notifier", db, never, withLease(length, heartbeat), lease.WithClock(clk)), never, msg)
			end := time.UnixMilli(until.Load()) // the lease as written
			if want := clk.Now().Add(length); !end.Equal(want.Truncate(time.Millisecond)) {
				t.Fatalf("lease written until %v; want %v", end, want)
			}
			for n := int64(1); clk.Now().Add(heartbeat).Before(end); n++ {
				clk.Advance(heartbeat)
				testkit.Eventually(t, 30*time.Second, func() error {
					if got := extensions.Load(); got < n {
						return fmt.Errorf("%d extensions tried by %v; want %d", got, clk.Now(), n)
					}
					return nil
				})
			}
			// The effect stops a quarter of a heartbeat before its lease ends, for a pause of
			// this process and the clock skew with the next owner's host; not earlier.
			clk.Advance(end.Add(-heartbeat/4 - time.Millisecond).Sub(clk.Now()))
			if never.ended() {
				t.Fatalf("the effect was stopped at %v, more than a quarter heartbeat before its lease ends at %v", clk.Now(), end)
			}
			clk.Advance(end.Sub(clk.Now()))
			if !never.ended() {
				t.Fatalf("the effect still runs at %v, when its lease ends", end)
			}
			err := waitMoving(t, clk, 0, done)
			if !errors.Is(err, lease.ErrLost) || idempotency.IsPermanent(err) {
				t.Errorf("effect past its lease = %v; want it failed with its lease lost", err)
			}
			if err != nil && strings.Contains(err.Error(), "%!") {
				t.Errorf("effect past its lease = %q; want a readable reason", err)
			}
		})
	}
}

// A claim whose PutItem committed but whose answer was lost is retried with the same owner
// token, so the retry finds its own lease, not someone else's, and goes on.
func TestLeased_an_ambiguous_claim_is_retried_as_the_same_owner(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	var dropped atomic.Bool
	db := applytest.Faulty(t, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleInitialize(ctx, in)
		if _, ok := claimedUntil(in.Parameters); ok && err == nil && dropped.CompareAndSwap(false, true) {
			return out, md, errors.New("connection reset: the claim committed, its answer was lost")
		}
		return out, md, err
	})
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	res, err := applytest.Process(minuteLeft(t), f.Leased(t, "notifier", db, r.Effect()), msg)
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("Apply after a lost claim answer = %+v, %v; want applied", res, err)
	}
	if !dropped.Load() {
		t.Fatal("no claim answer was dropped; the fault did not fire")
	}
	if n := r.Applied(); n != 1 {
		t.Errorf("effect ran %d times; want once", n)
	}
}

// A claim, completion or release call that hangs is given up Retry.Margin before the
// invocation's deadline, as a commit is, leaving time to report the message. Each call's own
// deadline shows it, whatever the load: the claim's is Retry.Margin before the invocation's,
// a completion's or release's half of it.
func TestLeased_calls_are_bounded_by_the_invocation_deadline(t *testing.T) {
	t.Parallel()
	const margin = 500 * time.Millisecond
	tests := []struct {
		name  string
		hangs func(in any) bool
		fail  bool          // the effect fails, so the record is released
		ends  time.Duration // how long before the invocation's deadline the call is given up
	}{
		{"claim", func(in any) bool { _, ok := claimedUntil(in); return ok }, false, margin},
		{"completion", func(in any) bool { _, ok := in.(*dynamodb.UpdateItemInput); return ok && !isExtension(in) }, false, margin / 2},
		{"release", func(in any) bool { _, ok := in.(*dynamodb.DeleteItemInput); return ok }, true, margin / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, r := applytest.New(t), applytest.NewReceiver(t)
			var hung []time.Time // each hung call's deadline; the zero time for none
			var mu sync.Mutex
			db := applytest.Faulty(t, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if !tt.hangs(in.Parameters) {
					return next.HandleInitialize(ctx, in)
				}
				end, bounded := ctx.Deadline()
				mu.Lock()
				hung = append(hung, end)
				mu.Unlock()
				if !bounded {
					return middleware.InitializeOutput{}, middleware.Metadata{}, errors.New("a call without a deadline would hang past the invocation")
				}
				<-ctx.Done()
				return middleware.InitializeOutput{}, middleware.Metadata{}, ctx.Err()
			})
			if tt.fail {
				r.FailNext(1)
			}
			id := applytest.Unique(t)
			msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
			// Room for the calls before the hung one, measured on this machine now.
			deadline := time.Now().Add(roomFor(t, f) + margin)
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			c := f.Leased(t, "notifier", db, r.Effect(), func(c *lease.Config) { c.Retry.Margin = margin })
			_, err := applytest.Process(ctx, c, msg)
			if err == nil {
				t.Fatal("Apply = nil; want the hung call's failure")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(hung) != 1 {
				t.Fatalf("the %s was called %d times, deadlines %v; want once, given up and not tried again", tt.name, len(hung), hung)
			}
			if want := deadline.Add(-tt.ends); hung[0].IsZero() || hung[0].After(want) {
				t.Errorf("the %s's deadline = %v; want %v, %v before the invocation's %v", tt.name, hung[0], want, tt.ends, deadline)
			}
		})
	}
}
