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
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
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
				e = append(e, f.Add(applytest.Counted{Counter: fmt.Sprintf("%s-%d", ev.ID, i), By: 1}))
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
			id := applytest.Unique(t)
			c := f.ConsumerFor(t, "holder", writes(tt.writes), hold)
			_, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1}))
			if got := errors.Is(err, idempotency.ErrInvalidEffect); got != tt.invalid {
				t.Errorf("Apply = %v; want invalid %v", err, tt.invalid)
			}
			if tt.invalid && !strings.Contains(err.Error(), "HoldGroup") {
				t.Errorf("error %q does not say why", err)
			}
		})
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
			return applytest.Message(t, "m1", counter+"-a", "test.counted", applytest.Counted{Counter: counter, By: 1})
		}, idempotency.Applied},
		{"rejected", func(c *idempotency.Consumer, blocker events.SQSMessage) {
			counter := strings.TrimSuffix(mustDecode(t, blocker).ID, "-a")
			earlier := applytest.Message(t, "m0", counter+"-0", "test.counted", applytest.Counted{Counter: counter, By: 1})
			if res, err := applytest.Process(context.Background(), c, earlier); err != nil || res.Outcome != idempotency.Applied {
				t.Fatalf("earlier event = %+v, %v", res, err)
			}
		}, func(counter string) events.SQSMessage {
			return applytest.Message(t, "m1", counter+"-a", "test.capped", applytest.Counted{Counter: counter, By: 11})
		}, idempotency.Rejected},
		{"found applied already", func(c *idempotency.Consumer, blocker events.SQSMessage) {
			if res, err := applytest.Process(context.Background(), c, blocker); err != nil || res.Outcome != idempotency.Applied {
				t.Fatalf("blocker's last attempt = %+v, %v", res, err)
			}
		}, func(counter string) events.SQSMessage {
			return applytest.Message(t, "m1", counter+"-a", "test.counted", applytest.Counted{Counter: counter, By: 1})
		}, idempotency.Duplicate},
	}
	// How the blocker comes to head the hold: HoldGroup, as the engine dead-letters it; an
	// event found applied already is held only by the backstop, by message id, before it was
	// decoded (HoldGroup refuses to hold a decided event), and comes back redriven.
	held := func(t *testing.T, c *idempotency.Consumer, blocker events.SQSMessage, applied bool) events.SQSMessage {
		ev := mustDecode(t, blocker)
		if applied {
			if err := engineOf(c).HoldGroup(context.Background(), "group-1", holdlist.Held{EventID: ev.ID, MessageID: "m1", PayloadHash: ev.PayloadHash()},
				errors.New("failed 5 times")); !errors.Is(err, engine.ErrDecided) {
				t.Fatalf("HoldGroup of an applied event = %v; want it decided already, holding nothing", err)
			}
			if err := engineOf(c).HoldMessages(context.Background(), "group-1", []holdlist.Held{{MessageID: "m1"}}); err != nil {
				t.Fatal(err)
			}
			return applytest.Redriven(blocker, "m1-redriven")
		}
		if err := engineOf(c).HoldGroup(context.Background(), "group-1", holdlist.Held{EventID: ev.ID, MessageID: "m1", PayloadHash: ev.PayloadHash()},
			errors.New("failed 5 times")); err != nil {
			t.Fatal(err)
		}
		return applytest.Redelivered(blocker, 6)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			counter := applytest.Unique(t)
			c := f.ConsumerFor(t, "holder-"+counter, f.Router(), hold, func(c *idempotency.Config) { c.CacheSize = -1 })
			blocker := tt.blocker(counter)
			if tt.before != nil {
				tt.before(c, blocker)
			}
			again := held(t, c, blocker, tt.want == idempotency.Duplicate)
			if res, err := applytest.Process(ctx, c, again); err != nil || res.Outcome != tt.want {
				t.Fatalf("redriven blocker = %+v, %v; want %s", res, err, tt.want)
			}
			next := applytest.Message(t, "m2", counter+"-b", "test.counted", applytest.Counted{Counter: counter, By: 2})
			if res, err := applytest.Process(ctx, c, next); err != nil || res.Outcome != idempotency.Applied {
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

// A group held behind a message that was held before its event id was read (the backstop's,
// an undecodable body) names that message: a held message's letter says what to look for.
func TestHeldError_names_the_message_when_the_blocker_has_no_event_id(t *testing.T) {
	t.Parallel()
	err := &engine.HeldError{Group: "acct", BlockerMessage: "m-7", BlockerReason: "not a CloudEvent"}
	if msg := err.Error(); strings.Contains(msg, `event ""`) || !strings.Contains(msg, "held behind message m-7") {
		t.Errorf("HeldError = %q; want it held behind message m-7, not behind an empty event id", msg)
	}
	named := &engine.HeldError{Group: "acct", BlockerEventID: "e1", BlockerMessage: "m-1", BlockerReason: "failed 5 times"}
	if msg := named.Error(); !strings.Contains(msg, `held behind event "e1" (message m-1)`) {
		t.Errorf("HeldError = %q; want it held behind event e1 and its message", msg)
	}
}
