package sqsbatch_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// A message whose MaxAttempts-th failure could not be dead-lettered (the hold or the
// dead-letter send failed) has failed MaxAttempts times already: its next delivery goes
// straight to hold and dead-letter, without running its handler a sixth time, rather than
// failing up to its 10th attempt.
func TestProcessor_a_message_past_MaxAttempts_is_dead_lettered_without_running_again(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		holds    int64 // hold writes throttled, each an attempt of the engine's Retry
		sendFail bool  // the first dead-letter send fails
	}{
		{"the dead-letter send failed", 0, true},
		{"the hold could not be written", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var puts atomic.Int64
			r := newRedrive(t)
			r.failing[r.eventID(t, "a/1")] = true
			db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(fault.ThrottleFirstWrites("#hold#", tc.holds, &puts)))
			var sends atomic.Int64
			dl := batch.DeadLettererFunc(func(ctx context.Context, msg events.SQSMessage, reason error) error {
				if sends.Add(1) == 1 && tc.sendFail {
					return errors.New("injected: the dead-letter queue is unavailable")
				}
				return r.DeadLetter(ctx, msg, reason)
			})
			quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
			p, err := sqsbatch.NewConsumer(db, r, idempotency.Config{Name: "ledger", Table: testkit.Table(t, r.db, "idem", "pk"),
				Logger: quiet, AfterDeadLetter: idempotency.HoldGroup, Retry: idempotency.Retry{MaxAttempts: 2, BaseDelay: time.Millisecond}},
				sqsbatch.Config{Options: batch.Options{DeadLetter: dl}})
			if err != nil {
				t.Fatal(err)
			}
			q := newFIFOQueue(t, backstop, "a/1", "a/2")
			q.drain(t, p)

			if got := r.tried[r.eventID(t, "a/1")]; got != port.DefaultMaxAttempts {
				t.Errorf("a/1's handler ran %d times; want %d: past MaxAttempts it is dead-lettered without running", got, port.DefaultMaxAttempts)
			}
			if got := q.received["a/1"]; got != port.DefaultMaxAttempts+1 {
				t.Errorf("a/1 received %d times; want %d: dead-lettered on the delivery after the failed one", got, port.DefaultMaxAttempts+1)
			}
			if want := []string{"a/1", "a/2"}; !slices.Equal(r.deadIDs(), want) {
				t.Errorf("dead-lettered %v; want %v (a/2 held behind a/1)", r.deadIDs(), want)
			}
			if got := r.applied(t, "a"); len(got) != 0 {
				t.Errorf("group a applied %v; want nothing while held", got)
			}
		})
	}
}
