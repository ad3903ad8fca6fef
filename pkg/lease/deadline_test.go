package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/operator"
)

// An effect that would outlive the invocation is stopped in time for its record to be
// released and the message reported failed before Lambda's deadline: a timeout would return
// the whole batch.
func TestLeasedConsumer_a_slow_effect_is_stopped_before_the_invocation_deadline(t *testing.T) {
	t.Parallel()
	f := applytest.New(t)
	const margin = time.Second // roomy: the release after the stop is a DynamoDB call, slower on a loaded machine
	slow := lease.SideEffectFunc(func(ctx context.Context, _ cloudevent.Event, _ string) error {
		<-ctx.Done() // longer than the invocation has
		return context.Cause(ctx)
	})
	c := f.Leased(t, "notifier", nil, slow, func(cfg *lease.Config) {
		cfg.Retry.Margin = margin
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	deadline, _ := ctx.Deadline()
	id := applytest.Unique(t)
	res, err := applytest.Process(ctx, c, applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: "x", By: 1}))
	left := time.Until(deadline)
	if res.Outcome != idempotency.Failed || err == nil || idempotency.IsPermanent(err) {
		t.Fatalf("Process = %+v, %v; want a transient failure", res, err)
	}
	if left < margin/4 {
		t.Errorf("Process returned %v before the deadline; want about %v left", left, margin)
	}
	if _, found := f.Record(t, operator.Key("notifier", id)); found {
		t.Error("the lease was not released: the next delivery would wait for it to expire")
	}
}
