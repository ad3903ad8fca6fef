package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// quickRetry is an engine policy whose attempts a test can count: 3, a few milliseconds apart.
var quickRetry = idempotency.Retry{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}

// Every call of the failure path and of the lease mode goes through the engine's one retry
// layer: under throttling throughout, the client (built with the SDK's default retryer, 3
// attempts per call with its own backoff) makes exactly the engine's MaxAttempts attempts of
// it, within what the engine's backoff allows.
func TestFailurePath_calls_are_retried_by_the_engine_alone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hold := func(c *idempotency.Config) { c.AfterDeadLetter = idempotency.HoldGroup }
	throttled := func(t *testing.T, op string, attempts *atomic.Int64) *dynamodb.Client {
		return testkit.DynamoDB(t, dynamodb.WithAPIOptions(fault.ThrottleFirst(op, 1_000_000, attempts)))
	}
	consumer := func(t *testing.T, db idempotency.DB, name string) *idempotency.Consumer {
		c, err := idempotency.New(db, f.Router(), idempotency.Config{Name: name, Table: f.Records, CacheSize: -1,
			AfterDeadLetter: idempotency.HoldGroup, Retry: quickRetry})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	leased := func(t *testing.T, db idempotency.DB, name string, r *applytest.Receiver) *lease.Consumer {
		return f.Leased(t, name, db, r.Effect(), func(c *lease.Config) { c.Retry = quickRetry })
	}
	tests := []struct {
		name string
		op   string
		run  func(t *testing.T, ctx context.Context, db idempotency.DB, name string) error
	}{
		{"counting an attempt", "TransactWriteItems", func(t *testing.T, ctx context.Context, db idempotency.DB, name string) error {
			_, err := engineOf(consumer(t, db, name)).CountMessageFailure(ctx, cloudevent.Event{ID: applytest.Unique(t)}, port.Delivery{MessageID: "m1"}, errors.New("downstream failed"))
			return err
		}},
		{"writing a hold", "TransactWriteItems", func(t *testing.T, ctx context.Context, db idempotency.DB, name string) error {
			return engineOf(consumer(t, db, name)).HoldGroup(ctx, "g-"+applytest.Unique(t), holdlist.Held{EventID: applytest.Unique(t), MessageID: "m1"}, errors.New("failed 5 times"))
		}},
		{"the release after a duplicate", "DeleteItem", func(t *testing.T, ctx context.Context, db idempotency.DB, name string) error {
			counter := applytest.Unique(t)
			blocker := applytest.Message(t, "m1", counter+"-a", "test.counted", applytest.Counted{Counter: counter, By: 1})
			blocker.Attributes["MessageGroupId"] = "g-" + counter
			plain := f.ConsumerFor(t, name, f.Router(), hold)
			if res, err := applytest.Process(ctx, plain, blocker); err != nil || res.Outcome != idempotency.Applied {
				t.Fatalf("blocker's last attempt = %+v, %v", res, err)
			}
			// held by the backstop on its last receives, before it was decoded; then SQS moved it
			if err := engineOf(plain).HoldMessages(ctx, "g-"+counter, []holdlist.Held{{MessageID: "m1"}}); err != nil {
				t.Fatal(err)
			}
			_, err := applytest.Process(ctx, consumer(t, db, name), applytest.Redriven(blocker, "m1-redriven"))
			return err
		}},
		{"a lease's claim", "PutItem", func(t *testing.T, ctx context.Context, db idempotency.DB, name string) error {
			_, err := applytest.Process(ctx, leased(t, db, name, applytest.NewReceiver(t)), applytest.Message(t, "m1", applytest.Unique(t), "test.counted", applytest.Counted{Counter: applytest.Unique(t), By: 1}))
			return err
		}},
		{"a lease's completion", "UpdateItem", func(t *testing.T, ctx context.Context, db idempotency.DB, name string) error {
			_, err := applytest.Process(ctx, leased(t, db, name, applytest.NewReceiver(t)), applytest.Message(t, "m1", applytest.Unique(t), "test.counted", applytest.Counted{Counter: applytest.Unique(t), By: 1}))
			return err
		}},
		{"a lease's release after its effect failed", "DeleteItem", func(t *testing.T, ctx context.Context, db idempotency.DB, name string) error {
			r := applytest.NewReceiver(t)
			r.FailNext(1)
			_, err := applytest.Process(ctx, leased(t, db, name, r), applytest.Message(t, "m1", applytest.Unique(t), "test.counted", applytest.Counted{Counter: applytest.Unique(t), By: 1}))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var attempts atomic.Int64
			start := time.Now()
			err := tt.run(t, ctx, throttled(t, tt.op, &attempts), "c-"+testkit.Name("r"))
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), "ThrottlingException") {
				t.Fatalf("error %v; want the throttling reported", err)
			}
			if got := attempts.Load(); got != int64(quickRetry.MaxAttempts) {
				t.Errorf("%d %s attempts reached DynamoDB; want %d, the engine's MaxAttempts, none of the SDK's retryer", got, tt.op, quickRetry.MaxAttempts)
			}
			// The attempts' count above is the property; the time only tells the engine's
			// millisecond backoff from the SDK's retryer (seconds), loosely, for a loaded machine.
			if took > 5*time.Second {
				t.Errorf("took %s; the engine's policy allows 3 attempts a few milliseconds apart", took)
			}
		})
	}
}
