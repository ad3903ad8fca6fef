package idempotency_test

import (
	"context"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/idempotency"
)

// A LeasedConsumer's pack applies each event alone, at once: a member never waits for
// another, since a lease and its completion cannot share a transaction.
func TestLeased_pack_applies_each_event_alone(t *testing.T) {
	t.Parallel()
	f, r := newFixture(t), newReceiver(t)
	c := f.leased(t, "notifier", nil, r.effect())
	if c.Packs() {
		t.Error("LeasedConsumer.Packs() = true; want false")
	}
	pack := c.NewPack(2) // the second member never comes: a sharing pack would wait for it
	defer pack.Leave(context.Background())
	id := unique(t)
	done := make(chan error, 1)
	go func() {
		res, err := process(context.Background(), pack, message(t, "m1", id, "test.counted", counted{Counter: id, By: 1}))
		if err == nil && res.Outcome != idempotency.Applied {
			t.Errorf("outcome %s; want applied", res.Outcome)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil || r.Applied() != 1 {
			t.Fatalf("Apply = %v, effect ran %d times; want applied once", err, r.Applied())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the leased pack waited for a member that never came")
	}
}
