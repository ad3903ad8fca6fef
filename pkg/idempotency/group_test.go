package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

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
