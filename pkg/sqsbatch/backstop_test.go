package sqsbatch_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// timingOut is the redrive consumer whose Decide, for the events in hangs, runs until the
// invocation's deadline: Lambda would time the invocation out, and nothing of the message's
// failure is counted (the count's own call has no time left).
type timingOut struct {
	*redrive
	hangs map[string]bool
}

func (h timingOut) Decide(ctx context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
	if h.hangs[ev.ID] {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return h.redrive.Decide(ctx, ev)
}

// functionTimeout is the invocation's timeout for a test whose handler runs until it: the
// calls the engine makes before the handler (the backstop's hold) must fit in it on this
// machine as loaded as it is now. It is derived from what it measures: twenty times the
// slowest of five conditional writes to the records table, never under 300 ms.
func functionTimeout(t *testing.T, r *redrive, records string) time.Duration {
	t.Helper()
	var slowest time.Duration
	for i := range 5 {
		start := time.Now()
		_, err := r.db.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(records),
			Item:                map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("timing#%d", i)}},
			ConditionExpression: aws.String("attribute_not_exists(pk)")})
		if err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(start))
	}
	timeout := max(300*time.Millisecond, 20*slowest)
	t.Logf("the function's timeout: %v (slowest write %v)", timeout, slowest)
	return timeout
}

// A message the engine cannot count (every invocation times out) is moved to the dead-letter
// queue by the queue's redrive policy after maxReceiveCount receives; it must leave its group
// held all the same: the processor, knowing the queue's maxReceiveCount, writes the hold
// naming it before handling it on its last receives, so its group-mates are held behind it
// (dead-lettered after it, in order), never applied past it.
func TestProcessor_a_message_the_queue_moves_by_itself_holds_its_group(t *testing.T) {
	const maxReceiveCount = 4
	r := newRedrive(t)
	h := timingOut{redrive: r, hangs: map[string]bool{r.eventID(t, "a/1"): true}}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	records := testkit.Table(t, r.db, "idem", "pk")
	p, err := sqsbatch.NewConsumer(r.db, h, idempotency.Config{Name: "ledger", Table: records, Logger: quiet,
		AfterDeadLetter: idempotency.HoldGroup, Retry: idempotency.Retry{Margin: 50 * time.Millisecond}},
		sqsbatch.Config{Options: batch.Options{DeadLetter: r, DeadlineMargin: 10 * time.Millisecond}, MaxReceiveCount: maxReceiveCount})
	if err != nil {
		t.Fatal(err)
	}
	q := newFIFOQueue(t, maxReceiveCount, "a/1", "a/2", "b/1")
	timeout := functionTimeout(t, r, records)
	for range 3 * maxReceiveCount {
		ev := q.receive()
		if len(ev.Records) == 0 {
			break
		}
		ctx, cancel := context.WithTimeout(t.Context(), timeout) // the function's timeout
		q.settle(ev, handle(t, p, ctx, ev))
		cancel()
	}

	// a/2 came in every batch behind a/1, untried: the queue moves both, in order. (So does
	// b/1: its commit waits in the batch's shared transaction for a/1, which never comes.)
	if len(q.redriven) < 2 || q.redriven[0] != "a/1" || q.redriven[1] != "a/2" {
		t.Fatalf("the queue's redrive policy moved %v; want a/1, which never finished, and a/2 behind it", q.redriven)
	}
	admin := operator.New(r.db, records)
	moved := map[string][]string{} // group -> the messages the queue moved, in order
	for _, m := range q.redriven {
		group, _, _ := strings.Cut(m, "/")
		moved[group] = append(moved[group], m)
	}
	for group, want := range moved {
		// Held before decoding, so by message id (the id each was first sent as), in order.
		hold, ok, err := admin.Hold(t.Context(), "ledger", group)
		var got []string
		for _, e := range hold.Held {
			got = append(got, e.MessageID)
		}
		if err != nil || !ok || !slices.Equal(got, want) {
			t.Errorf("the queue moved %v, and group %s's hold = %+v, %v, %v; want it held behind them in order", want, group, hold, ok, err)
		}
	}
	q.send(t, "a/3") // the account's next movement
	q.drain(t, p)
	if got := r.applied(t, "a"); len(got) != 0 {
		t.Errorf("group a applied %v past a/1, which the queue moved to its dead-letter queue; want nothing while held", got)
	}
	if !slices.Contains(r.deadIDs(), "a/3") {
		t.Errorf("dead-lettered by the engine %v; want a/3 among them, held behind a/1", r.deadIDs())
	}
}

// The hold written before a message's last receives is released by its own commit when it
// succeeds, however the commit ends (applied, or found applied already, from this
// environment's cache too): the group goes on.
func TestProcessor_the_backstop_hold_is_released_when_the_message_succeeds(t *testing.T) {
	const maxReceiveCount = 4
	for _, cached := range []bool{false, true} {
		name := map[bool]string{false: "applied", true: "found applied already by this environment"}[cached]
		t.Run(name, func(t *testing.T) {
			r := newRedrive(t)
			quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
			records := testkit.Table(t, r.db, "idem", "pk")
			p, err := sqsbatch.NewConsumer(r.db, r, idempotency.Config{Name: "ledger", Table: records, Logger: quiet,
				AfterDeadLetter: idempotency.HoldGroup}, sqsbatch.Config{Options: batch.Options{DeadLetter: r}, MaxReceiveCount: maxReceiveCount})
			if err != nil {
				t.Fatal(err)
			}
			q := newFIFOQueue(t, maxReceiveCount+1, "a/1")
			ev := q.receive()
			if cached { // committed, but the answer was lost: received again, a duplicate
				handle(t, p, t.Context(), ev)
			}
			for range maxReceiveCount - 2 { // lost answers: received again without settling
				ev = q.receive()
			}
			if got := ev.Records[0].Attributes["ApproximateReceiveCount"]; got != "3" {
				t.Fatalf("receive count %s; want 3, within the last receives", got)
			}
			q.settle(ev, handle(t, p, t.Context(), ev))
			if _, ok, err := operator.New(r.db, records).Hold(t.Context(), "ledger", "a"); err != nil || ok {
				t.Errorf("group a still held (%v, %v); want the message's own commit to release its backstop hold", ok, err)
			}
			if got := r.applied(t, "a"); len(got) != 1 {
				t.Errorf("group a applied %v; want a/1 once", got)
			}
		})
	}
}

// The backstop holds before the batch runs: messages on their last receives that the deadline
// guard never starts are held too, each group's in batch order, and a message held already
// keeps its place when its next receive holds it again.
func TestProcessor_the_backstop_holds_messages_the_deadline_guard_never_started(t *testing.T) {
	const maxReceiveCount = 4
	r := newRedrive(t)
	records := testkit.Table(t, r.db, "idem", "pk")
	p, err := sqsbatch.NewConsumer(r.db, r, idempotency.Config{Name: "ledger", Table: records,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), AfterDeadLetter: idempotency.HoldGroup},
		sqsbatch.Config{Options: batch.Options{DeadLetter: r}, MaxReceiveCount: maxReceiveCount})
	if err != nil {
		t.Fatal(err)
	}
	q := newFIFOQueue(t, maxReceiveCount, "a/1", "b/1", "a/2", "a/3")
	admin := operator.New(r.db, records)
	for range maxReceiveCount - batch.BackstopReceives { // lost answers, then the two last receives
		q.receive()
	}
	for _, ev := range []events.SQSEvent{q.receive(), q.receive()} {
		ctx, cancel := context.WithTimeout(t.Context(), batch.DefaultDeadlineMargin/2) // no time to start any
		resp := handle(t, p, ctx, ev)
		cancel()
		if len(resp.BatchItemFailures) != len(ev.Records) {
			t.Fatalf("%d of %d messages reported; want every one (none started)", len(resp.BatchItemFailures), len(ev.Records))
		}
		for group, want := range map[string][]string{"a": {"a/1", "a/2", "a/3"}, "b": {"b/1"}} {
			hold, ok, err := admin.Hold(t.Context(), "ledger", group)
			var got []string
			for _, e := range hold.Held {
				got = append(got, e.MessageID)
			}
			if err != nil || !ok || !slices.Equal(got, want) {
				t.Errorf("group %s held behind %v (%v, %v); want %v, in batch order, each once", group, got, ok, err, want)
			}
		}
	}
	if got := r.applied(t, "a"); len(got) != 0 {
		t.Errorf("group a applied %v; want nothing started", got)
	}
}
