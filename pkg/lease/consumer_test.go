package lease_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// later is a clock an hour ahead: a delivery using it sees every lease taken now as expired.
func later(c *lease.Config) {
	c.Now = func() time.Time { return time.Now().Add(time.Hour) }
}

func withLease(length, heartbeat time.Duration) func(*lease.Config) {
	return func(c *lease.Config) { c.Lease, c.Heartbeat = length, heartbeat }
}

func TestLeased_new_event_runs_the_effect_once_and_completes_the_record(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	c := f.Leased(t, "notifier", nil, r.Effect())
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})

	res, err := applytest.Process(minuteLeft(t), c, msg)
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("Process = %+v, %v; want applied", res, err)
	}
	key := operator.Key("notifier", id)
	if got := r.Keys(); !slices.Equal(got, []string{key}) {
		t.Errorf("receiver calls = %q, want one with key %q", got, key)
	}
	rec, ok := f.Record(t, key)
	if !ok || rec.Status != operator.StatusCompleted || rec.Outcome != "applied" || rec.Owner == "" ||
		rec.LeaseExpiresAt != 0 || rec.MessageID != "m1" {
		t.Errorf("record = %+v, %v; want completed and applied, with its owner and no lease", rec, ok)
	}
	if ttl := time.Until(time.Unix(rec.ExpiresAt, 0)); ttl < 14*24*time.Hour {
		t.Errorf("record expires in %v, want the default retention", ttl)
	}
}

func TestLeased_redelivery_after_completion_is_a_duplicate_and_makes_no_call(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	c := f.Leased(t, "notifier", nil, r.Effect())
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	if res, err := applytest.Process(minuteLeft(t), c, msg); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("first delivery = %+v, %v", res, err)
	}
	res, err := applytest.Process(minuteLeft(t), c, applytest.Redelivered(msg, 2))
	if err != nil || res.Outcome != idempotency.Duplicate || res.Stored != idempotency.Applied {
		t.Fatalf("redelivery = %+v, %v; want a duplicate of applied", res, err)
	}
	if n := len(r.Calls()); n != 1 {
		t.Errorf("receiver called %d times, want 1", n)
	}

	other := applytest.Message(t, "m2", id, "test.counted", applytest.Counted{Counter: id, By: 2})
	res, err = applytest.Process(minuteLeft(t), c, other)
	if res.Outcome != idempotency.Conflict || !errors.Is(err, idempotency.ErrConflict) || !idempotency.IsPermanent(err) {
		t.Errorf("same id, other payload = %+v, %v; want a permanent conflict", res, err)
	}
	if n := len(r.Calls()); n != 1 {
		t.Errorf("receiver called %d times after a conflict, want 1", n)
	}
}

func TestLeased_crash_after_the_call_then_redelivery_after_the_lease_calls_again_with_the_same_key(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	var m bytes.Buffer
	rec := metrics.NewEMF(&m, "test", nil)
	id := applytest.Unique(t)
	key := operator.Key("notifier", id)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})

	// The first owner makes the call, then its process dies before completing.
	db := &crashingDB{DB: f.DB}
	crashing := f.Leased(t, "notifier", db, lease.SideEffectFunc(func(ctx context.Context, ev cloudevent.Event, k string) error {
		err := r.Call(ctx, ev, k)
		db.die()
		return err
	}), func(c *lease.Config) { c.Retry.MaxAttempts = 1 })
	if res, err := applytest.Process(minuteLeft(t), crashing, msg); res.Outcome != idempotency.Failed || err == nil {
		t.Fatalf("crashed delivery = %+v, %v; want failed", res, err)
	}
	first, _ := f.Record(t, key)
	if first.Status != operator.StatusInProgress || first.Owner == "" {
		t.Fatalf("record after the crash = %+v; want in progress", first)
	}

	// Redelivered while the lease is live: failed for a later retry, not skipped, no call.
	res, err := applytest.Process(minuteLeft(t), f.Leased(t, "notifier", nil, r.Effect()), applytest.Redelivered(msg, 2))
	if res.Outcome != idempotency.Failed || !errors.Is(err, lease.ErrHeld) || idempotency.IsPermanent(err) {
		t.Fatalf("redelivery under a live lease = %+v, %v; want failed with ErrLeaseHeld, not permanent", res, err)
	}

	// Redelivered after the lease expired: taken over, called again with the same key.
	next := f.Leased(t, "notifier", nil, r.Effect(), later, func(c *lease.Config) { c.Metrics = rec })
	if res, err := applytest.Process(minuteLeft(t), next, applytest.Redelivered(msg, 3)); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("redelivery after the lease = %+v, %v; want applied", res, err)
	}
	if got := r.Keys(); !slices.Equal(got, []string{key, key}) {
		t.Errorf("receiver calls = %q, want the same key twice", got)
	}
	if r.Applied() != 1 {
		t.Errorf("receiver applied %d effects, want 1", r.Applied())
	}
	final, _ := f.Record(t, key)
	if final.Status != operator.StatusCompleted || final.Owner == "" || final.Owner == first.Owner {
		t.Errorf("record = %+v; want completed by the new owner (the crashed one was %s)", final, first.Owner)
	}
	_ = rec.Flush()
	if !strings.Contains(m.String(), `"LeaseTakeover":1`) || !strings.Contains(f.Logs.String(), "lease taken over") {
		t.Errorf("take-over not counted and logged:\nmetrics %s\nlogs %s", m.String(), f.Logs.String())
	}
}

func TestLeased_late_owner_completing_after_a_take_over_loses_its_lease_and_overwrites_nothing(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	id := applytest.Unique(t)
	key := operator.Key("notifier", id)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})

	slow := newGate(r)
	late, ctx := make(chan error, 1), minuteLeft(t)
	go func() {
		_, err := applytest.Process(ctx, f.Leased(t, "notifier", nil, slow), msg)
		late <- err
	}()
	<-slow.started
	held, _ := f.Record(t, key)

	if res, err := applytest.Process(minuteLeft(t), f.Leased(t, "notifier", nil, r.Effect(), later), applytest.Redelivered(msg, 2)); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("take-over = %+v, %v; want applied", res, err)
	}
	taken, _ := f.Record(t, key)

	close(slow.open)
	err := <-late
	var lost *engine.LeaseLostError
	if !errors.As(err, &lost) || !errors.Is(err, lease.ErrLost) || idempotency.IsPermanent(err) {
		t.Fatalf("late completion = %v; want a LeaseLostError, not permanent", err)
	}
	if lost.Op != "complete" || lost.Owner != held.Owner || lost.Holder != taken.Owner {
		t.Errorf("lost lease = %+v; want complete by %s refused, held by %s", lost, held.Owner, taken.Owner)
	}
	if final, _ := f.Record(t, key); final != taken {
		t.Errorf("record changed by the late owner:\n got %+v\nwant %+v", final, taken)
	}
}

func TestLeased_release_on_error_lets_the_next_delivery_run(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	c := f.Leased(t, "notifier", nil, r.Effect())
	id := applytest.Unique(t)
	key := operator.Key("notifier", id)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	r.FailNext(1)

	res, err := applytest.Process(minuteLeft(t), c, msg)
	if res.Outcome != idempotency.Failed || err == nil || idempotency.IsPermanent(err) {
		t.Fatalf("failing effect = %+v, %v; want failed, not permanent", res, err)
	}
	if _, ok := f.Record(t, key); ok {
		t.Fatal("record still there after the effect failed; want it released")
	}
	if res, err := applytest.Process(minuteLeft(t), c, applytest.Redelivered(msg, 2)); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("next delivery = %+v, %v; want applied at once", res, err)
	}
	if got := r.Keys(); !slices.Equal(got, []string{key, key}) {
		t.Errorf("receiver calls = %q, want the same key twice", got)
	}
}

func TestLeased_live_lease_held_by_another_is_a_batch_item_failure_not_a_skip(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	running := newGate(r)
	done := runHeld(t, f.Leased(t, "notifier", nil, running), running, msg)

	p, err := sqsbatch.NewFor(f.Leased(t, "notifier", nil, r.Effect()).Engine(), sqsbatch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{applytest.Redelivered(msg, 2)}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Errorf("batch response = %+v, %v; want m1 reported failed", resp, err)
	}
	close(running.open)
	if err := <-done; err != nil {
		t.Errorf("holder = %v; want applied", err)
	}
	if n := len(r.Calls()); n != 1 {
		t.Errorf("receiver called %d times, want once (by the holder)", n)
	}
}

func TestLeased_wait_for_completion_turns_a_held_lease_into_a_duplicate(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	running := newGate(r)
	done := runHeld(t, f.Leased(t, "notifier", nil, running), running, msg)
	time.AfterFunc(300*time.Millisecond, func() { close(running.open) })

	// An upper bound only: the wait ends when the holder completes, however loaded the machine.
	waiting := f.Leased(t, "notifier", nil, r.Effect(), func(c *lease.Config) { c.WaitForCompletion = 30 * time.Second })
	res, err := applytest.Process(minuteLeft(t), waiting, applytest.Redelivered(msg, 2))
	if err != nil || res.Outcome != idempotency.Duplicate {
		t.Errorf("waiting delivery = %+v, %v; want a duplicate once the holder completed", res, err)
	}
	if err := <-done; err != nil {
		t.Errorf("holder = %v; want applied", err)
	}
	if n := len(r.Calls()); n != 1 {
		t.Errorf("receiver called %d times, want 1", n)
	}
}
