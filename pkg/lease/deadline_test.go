package lease_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/operator"
)

// An effect that would outlive the invocation is stopped in time for its record to be
// released and the message reported failed before Lambda's deadline: a timeout would return
// the whole batch. The effect's and the release's own deadlines show it, whatever the load;
// the calls around them get room measured on this machine now.
func TestLeasedConsumer_a_slow_effect_is_stopped_before_the_invocation_deadline(t *testing.T) {
	t.Parallel()
	f := applytest.New(t)
	room := roomFor(t, f)
	margin := 2 * room // the effect stops here; the release has half of it
	var mu sync.Mutex
	var stoppedBy, releasedBy time.Time // the effect's and the release's deadlines
	slow := lease.SideEffectFunc(func(ctx context.Context, _ cloudevent.Event, _ string) error {
		mu.Lock()
		stoppedBy, _ = ctx.Deadline()
		mu.Unlock()
		<-ctx.Done() // longer than the invocation has
		return context.Cause(ctx)
	})
	db := applytest.Faulty(t, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if _, release := in.Parameters.(*dynamodb.DeleteItemInput); release {
			mu.Lock()
			releasedBy, _ = ctx.Deadline()
			mu.Unlock()
		}
		return next.HandleInitialize(ctx, in)
	})
	c := f.Leased(t, "notifier", db, slow, func(cfg *lease.Config) {
		cfg.Retry.Margin = margin
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*room+margin)
	defer cancel()
	deadline, _ := ctx.Deadline()
	id := applytest.Unique(t)
	res, err := applytest.Process(ctx, c, applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: "x", By: 1}))
	left := time.Until(deadline)
	if res.Outcome != idempotency.Failed || err == nil || idempotency.IsPermanent(err) {
		t.Fatalf("Process = %+v, %v; want a transient failure", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := deadline.Add(-margin); stoppedBy.IsZero() || stoppedBy.After(want) {
		t.Errorf("the effect's deadline = %v; want %v, Retry.Margin (%v) before the invocation's %v", stoppedBy, want, margin, deadline)
	}
	if want := deadline.Add(-margin / 2); releasedBy.IsZero() || releasedBy.After(want) {
		t.Errorf("the release's deadline = %v; want %v, half of Retry.Margin before the invocation's %v", releasedBy, want, deadline)
	}
	if left <= 0 {
		t.Errorf("Process returned %v after the deadline; want it before", -left)
	}
	if _, found := f.Record(t, operator.Key("notifier", id)); found {
		t.Error("the lease was not released: the next delivery would wait for it to expire")
	}
}
