package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// A lease.Consumer's batch applies each event alone, at once: a worker never waits for
// another, since a lease and its completion cannot share a transaction.
func TestLeased_pack_applies_each_event_alone(t *testing.T) {
	t.Parallel()
	f, r := applytest.New(t), applytest.NewReceiver(t)
	e := f.Leased(t, "notifier", nil, r.Effect()).Engine()
	if e.Packs() {
		t.Error("Packs() = true; want false")
	}
	b := e.Begin(2, port.Rules{}) // the second worker never comes: a sharing batch would wait for it
	defer b.Leave(context.Background())
	id := applytest.Unique(t)
	done, ctx := make(chan error, 1), minuteLeft(t)
	go func() {
		msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
		ev, err := cloudevent.Decode([]byte(msg.Body))
		if err == nil {
			err = b.Apply(ctx, ev, sqsbatch.DeliveryOf(msg))
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
