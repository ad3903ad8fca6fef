package sqsbatch_test

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The DynamoDB round trips of one batch under HoldGroup, counted by an SDK middleware on the
// consumer's client, on the fast path (nothing held) and on each step of the recovery path,
// printed as a table (docs/failure-path.md has it). Only the fast path is asserted: one
// TransactWriteItems per commit, and one for a whole batch of different groups, whatever the
// recovery path costs.
func TestProcessor_round_trips_per_commit_on_the_fast_and_recovery_paths(t *testing.T) {
	const maxReceiveCount = backstop // the template's figures: 50, and MaxAttempts 5
	r := newRedrive(t)
	requests := &testenv.Requests{}
	db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(requests.Middleware))
	table := testkit.Table(t, r.db, "idem", "pk")
	p, err := sqsbatch.NewConsumer(db, r, idempotency.Config{Name: "ledger", Table: table,
		AfterDeadLetter: idempotency.HoldGroup, CacheSize: -1, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))},
		sqsbatch.Config{Options: batch.Options{DeadLetter: r}, MaxReceiveCount: maxReceiveCount})
	if err != nil {
		t.Fatal(err)
	}
	q := newFIFOQueue(t, maxReceiveCount+1)
	var rows []string
	ops := []string{"TransactWriteItems", "PutItem", "GetItem", "UpdateItem", "DeleteItem"}
	// receive runs the next receive (after lost ones, whose answers are dropped) and returns its calls.
	receive := func(path string, lost int, specs ...string) int64 {
		t.Helper()
		for _, s := range specs {
			q.send(t, s)
		}
		for range lost {
			q.receive()
		}
		before := map[string]int64{"": requests.Total()}
		for _, op := range ops {
			before[op] = requests.Of(op)
		}
		ev := q.receive()
		q.settle(ev, handle(t, p, t.Context(), ev))
		calls := requests.Total() - before[""]
		var by []string
		for _, op := range ops {
			if n := requests.Of(op) - before[op]; n > 0 {
				by = append(by, fmt.Sprintf("%s %d", op, n))
			}
		}
		rows = append(rows, fmt.Sprintf("%s\t%d\t%d\t%.2f\t%s", path, len(ev.Records), calls, float64(calls)/float64(len(ev.Records)), strings.Join(by, ", ")))
		return calls
	}
	groups := make([]string, 10)
	for i := range groups {
		groups[i] = fmt.Sprintf("g%d/1", i)
	}
	if n := receive("applied: one batch of 10 groups", 0, groups...); n != 1 {
		t.Errorf("a batch of 10 groups, nothing held: %d calls; want 1 (one shared transaction)", n)
	}
	if n := receive("applied: one message", 0, "s/1"); n != 1 {
		t.Errorf("one message, nothing held: %d calls; want 1", n)
	}
	if n := receive("applied: 10 messages of one group", 0, "o/1", "o/2", "o/3", "o/4", "o/5", "o/6", "o/7", "o/8", "o/9", "o/10"); n != 10 {
		t.Errorf("10 messages of one group, nothing held: %d calls; want 10 (one per commit)", n)
	}
	receive("duplicate: an applied message delivered again", 0, "s/1")
	q.send(t, "s/1") // the producer sends it again: a new message
	q.msgs[len(q.msgs)-1].MessageId = "s/1-resent"
	receive("duplicate: a producer's re-send of an applied event", 0)
	r.failing[r.eventID(t, "f/1")] = true
	receive("failure: its first failed attempt", 0, "f/1")
	for n := 2; n < port.DefaultMaxAttempts; n++ {
		receive(fmt.Sprintf("failure: its failed attempt %d", n), 0)
	}
	receive("failure: the MaxAttempts-th, holds its group, dead-lettered", 0)
	receive("held: a live message of the held group", 0, "f/2")
	r.heal()
	receive("held: the hold's head, redriven", 0, "f/1@f/1-redriven")
	receive("held: the last held message, redriven", 0, "f/2@f/2-redriven")
	receive("applied: the group's next message, after the hold", 0, "f/3")
	receive("backstop: applied on its last receives", maxReceiveCount-batch.BackstopReceives, "b/1")
	q.msgs = append(q.msgs, events.SQSMessage{MessageId: "m/1", Body: "not a CloudEvent", EventSourceARN: fifoARN,
		Attributes: map[string]string{"MessageGroupId": "m"}})
	receive("malformed: holds its group, dead-lettered", 0)
	r.malformed[r.eventID(t, "h/1")] = true
	receive("malformed by its handler: holds its group, dead-lettered", 0, "h/1")
	q.send(t, "d/1") // an event an operator discarded, sent again; its handler still fails
	if _, err := operator.New(r.db, table).Discard(t.Context(), operator.Discard{Consumer: "ledger", EventID: r.eventID(t, "d/1"),
		MessageID: "d/0", Group: "d", Body: q.msgs[len(q.msgs)-1].Body, By: "ops", Why: "bad"}); err != nil {
		t.Fatal(err)
	}
	r.failing[r.eventID(t, "d/1")] = true
	receive("decided: a discarded event sent again, its handler failing", 0)

	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "path (HoldGroup)\tmessages\tcalls\tper message\tby operation")
	for _, row := range rows {
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	t.Logf("DynamoDB calls per batch:\n%s", b.String())
}
