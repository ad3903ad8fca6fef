package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// Under HoldGroup the group's hold takes one of the transaction's 100 items: an effect that
// would leave no room for it is refused before any call, as an invalid effect.
func TestConsumer_hold_group_leaves_room_for_the_hold_in_the_transaction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	writes := func(n int) idempotency.Handler {
		return idempotency.HandlerFunc(func(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
			var e idempotency.Effect
			for i := range n {
				e = append(e, f.add(counted{Counter: fmt.Sprintf("%s-%d", ev.ID, i), By: 1}))
			}
			return e, nil
		})
	}
	hold := func(c *idempotency.Config) { c.AfterDeadLetter = idempotency.HoldGroup }
	tests := []struct {
		name    string
		writes  int
		invalid bool
	}{
		{"98 writes fit", 98, false},
		{"99 writes leave no room", idempotency.MaxEffectWrites, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := unique(t)
			c := f.consumerFor(t, "holder", writes(tt.writes), hold)
			_, err := process(context.Background(), c, message(t, "m1", id, "test.counted", counted{Counter: id, By: 1}))
			if got := errors.Is(err, idempotency.ErrInvalidEffect); got != tt.invalid {
				t.Errorf("Apply = %v; want invalid %v", err, tt.invalid)
			}
			if tt.invalid && !strings.Contains(err.Error(), "HoldGroup") {
				t.Errorf("error %q does not say why", err)
			}
		})
	}
}

func TestNewLeased_refuses_HoldGroup(t *testing.T) {
	t.Parallel()
	noop := idempotency.SideEffectFunc(func(context.Context, cloudevent.Event, string) error { return nil })
	_, err := idempotency.NewLeased(fakeDB{}, noop, idempotency.LeaseConfig{Config: idempotency.Config{Name: "n", Table: "t",
		AfterDeadLetter: idempotency.HoldGroup}})
	if err == nil || !strings.Contains(err.Error(), "HoldGroup") {
		t.Errorf("NewLeased = %v; want HoldGroup refused in lease mode", err)
	}
}

// The blocker of a held group releases it whatever it ends as when it comes back from the
// dead-letter queue: applied, rejected by its effect's condition, or found applied already (a
// last attempt that committed though its answer was lost). Otherwise the group would stay
// held for good behind an event that is done.
func TestConsumer_the_blocker_releases_its_group_however_it_ends(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hold := func(c *idempotency.Config) { c.AfterDeadLetter = idempotency.HoldGroup }
	tests := []struct {
		name    string
		before  func(c *idempotency.Consumer, blocker events.SQSMessage) // what happened before the hold
		blocker func(counter string) events.SQSMessage
		want    idempotency.Outcome
	}{
		{"applied", nil, func(counter string) events.SQSMessage {
			return message(t, "m1", counter+"-a", "test.counted", counted{Counter: counter, By: 1})
		}, idempotency.Applied},
		{"rejected", func(c *idempotency.Consumer, blocker events.SQSMessage) {
			counter := strings.TrimSuffix(mustDecode(t, blocker).ID, "-a")
			earlier := message(t, "m0", counter+"-0", "test.counted", counted{Counter: counter, By: 1})
			if res, err := process(context.Background(), c, earlier); err != nil || res.Outcome != idempotency.Applied {
				t.Fatalf("earlier event = %+v, %v", res, err)
			}
		}, func(counter string) events.SQSMessage {
			return message(t, "m1", counter+"-a", "test.capped", counted{Counter: counter, By: 11})
		}, idempotency.Rejected},
		{"found applied already", func(c *idempotency.Consumer, blocker events.SQSMessage) {
			if res, err := process(context.Background(), c, blocker); err != nil || res.Outcome != idempotency.Applied {
				t.Fatalf("blocker's last attempt = %+v, %v", res, err)
			}
		}, func(counter string) events.SQSMessage {
			return message(t, "m1", counter+"-a", "test.counted", counted{Counter: counter, By: 1})
		}, idempotency.Duplicate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			counter := unique(t)
			c := f.consumerFor(t, "holder-"+counter, f.router(), hold, func(c *idempotency.Config) { c.CacheSize = -1 })
			blocker := tt.blocker(counter)
			if tt.before != nil {
				tt.before(c, blocker)
			}
			if err := c.HoldGroup(ctx, "group-1", counter+"-a", "m1", errors.New("failed 5 times")); err != nil {
				t.Fatal(err)
			}
			if res, err := process(ctx, c, redelivered(blocker, 6)); err != nil || res.Outcome != tt.want {
				t.Fatalf("redriven blocker = %+v, %v; want %s", res, err, tt.want)
			}
			next := message(t, "m2", counter+"-b", "test.counted", counted{Counter: counter, By: 2})
			if res, err := process(ctx, c, next); err != nil || res.Outcome != idempotency.Applied {
				t.Fatalf("the group's next event = %+v, %v; want applied: the blocker released the group", res, err)
			}
		})
	}
}

func mustDecode(t *testing.T, m events.SQSMessage) cloudevent.Event {
	t.Helper()
	ev, err := cloudevent.Decode([]byte(m.Body))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}
