package sqsbatch_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// Under throttling throughout, a failing message started with DeadlineMargin left answers
// before the invocation's deadline, and the failure path's calls (counting the attempt) make
// at most the engine's MaxAttempts attempts each: no SDK retry runs unseen beneath them.
func TestProcessor_a_failing_message_under_throttling_answers_within_the_deadline(t *testing.T) {
	var updates atomic.Int64
	r := newRedrive(t)
	r.failing[r.eventID(t, "a/1")] = true
	db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(fault.ThrottleFirstWrites("#attempts#", 1_000_000, &updates)))
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	retry := idempotency.Retry{MaxAttempts: 6}
	p, err := sqsbatch.NewConsumer(db, r, idempotency.Config{Name: "ledger", Table: testkit.Table(t, r.db, "idem", "pk"),
		Logger: quiet, AfterDeadLetter: idempotency.HoldGroup, Retry: retry}, sqsbatch.Config{Options: batch.Options{DeadLetter: r}})
	if err != nil {
		t.Fatal(err)
	}
	q := newFIFOQueue(t, backstop, "a/1")
	ev := q.receive()
	deadline := time.Now().Add(batch.DefaultDeadlineMargin + 50*time.Millisecond)
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	resp := handle(t, p, ctx, ev)
	if left := time.Until(deadline); left < 0 {
		t.Errorf("the batch answered %s after the invocation's deadline", -left)
	}
	if len(resp.BatchItemFailures) != 1 {
		t.Errorf("batch item failures %v; want a/1 reported for redelivery", resp.BatchItemFailures)
	}
	if got := updates.Load(); got < 1 || got > int64(retry.MaxAttempts) {
		t.Errorf("%d attempts to count the failure; want 1 to %d, the engine's MaxAttempts", got, retry.MaxAttempts)
	}
}
