package idempotency_test

import (
	"context"
	"errors"
	"testing"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/port"
)

// A message's failures are counted per SQS message: a copy of the event sent again (a
// redrive sends a new message) starts from 1, and
// MessageFailures answers for the message it is asked about only.
func TestConsumer_counts_failures_per_message(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter")
	ctx, id := context.Background(), applytest.Unique(t)
	for _, step := range []struct {
		msg       string
		want, tot int
	}{{"m1", 1, 1}, {"m1", 2, 2}, {"m2", 1, 3}, {"m2", 2, 4}} {
		n, err := engineOf(c).CountMessageFailure(ctx, cloudevent.Event{ID: id}, port.Delivery{MessageID: step.msg}, errors.New("failed"))
		if err != nil || n != step.want {
			t.Fatalf("CountMessageFailure(%s) = %d, %v; want %d", step.msg, n, err, step.want)
		}
	}
	if n, err := engineOf(c).CountMessageFailure(ctx, cloudevent.Event{ID: id}, port.Delivery{MessageID: "m2"}, errors.New("last")); err != nil || n != 3 {
		t.Errorf("CountMessageFailure(m2) = %d, %v; want 3", n, err)
	}
	for msg, want := range map[string]int{"m1": 0, "m2": 3} {
		n, last, err := engineOf(c).MessageFailures(ctx, id, msg)
		if err != nil || n != want {
			t.Errorf("MessageFailures(%s) = %d, %v; want %d", msg, n, err, want)
		}
		if want > 0 && last != "last" {
			t.Errorf("MessageFailures(%s) last error %q; want %q", msg, last, "last")
		}
	}
}
