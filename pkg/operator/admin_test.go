package operator_test

import (
	"context"
	"errors"
	"testing"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
)

func TestAdmin_reads_and_clears_a_record_its_attempts_and_a_hold(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	counter := unique(t)
	name := "admin-" + counter
	c := f.consumer(t, name, func(c *idempotency.Config) { c.AfterDeadLetter = idempotency.HoldGroup })
	msg := message(t, "m1", counter+"-a", "test.counted", counted{Counter: counter, By: 1})
	if _, err := engineOf(c).CountMessageFailure(ctx, cloudevent.Event{ID: counter + "-a"}, port.Delivery{MessageID: "m1"}, errors.New("throttled")); err != nil {
		t.Fatal(err)
	}
	if res, err := process(ctx, c, msg); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("apply = %+v, %v", res, err)
	}
	if err := engineOf(c).HoldGroup(ctx, "group-9", holdlist.Held{EventID: "evt-x", MessageID: "m9"}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	a := operator.New(f.db, f.records)

	rec, ok, err := a.Record(ctx, name, counter+"-a")
	if err != nil || !ok || rec.Outcome != string(idempotency.Applied) || rec.MessageID != "m1" || rec.Group != "group-1" {
		t.Fatalf("Record = %+v, %v, %v; want the applied record of m1", rec, ok, err)
	}
	at, ok, err := a.Attempts(ctx, name, counter+"-a")
	if err != nil || !ok || at.Attempts != 1 || at.LastError != "throttled" {
		t.Errorf("Attempts = %+v, %v, %v; want 1, throttled", at, ok, err)
	}
	h, ok, err := a.Hold(ctx, name, "group-9")
	if err != nil || !ok || h.BlockerEventID != "evt-x" || h.BlockerReason != "failed 5 times" {
		t.Errorf("Hold = %+v, %v, %v; want held behind evt-x", h, ok, err)
	}

	if _, ok, err := a.DeleteRecord(ctx, name, counter+"-a"); err != nil || !ok {
		t.Fatalf("DeleteRecord = %v, %v", ok, err)
	}
	if _, ok, _ := a.Attempts(ctx, name, counter+"-a"); ok {
		t.Error("the attempt count outlived the deleted record")
	}
	// What the operator was told: a redelivery applies the effect again.
	if res, err := process(ctx, c, redelivered(msg, 2)); err != nil || res.Outcome != idempotency.Applied || f.counter(t, counter) != 2 {
		t.Errorf("redelivery after delete = %+v, %v, counter %d; want applied again, 2", res, err, f.counter(t, counter))
	}
	if _, ok, err := a.ReleaseHold(ctx, name, "group-9"); err != nil || !ok {
		t.Fatalf("ReleaseHold = %v, %v", ok, err)
	}
	if _, ok, _ := a.Hold(ctx, name, "group-9"); ok {
		t.Error("the group is still held after ReleaseHold")
	}
	if _, ok, err := a.Record(ctx, name, "no-such-event"); ok || err != nil {
		t.Errorf("Record of an unknown event = %v, %v; want not found", ok, err)
	}
}
