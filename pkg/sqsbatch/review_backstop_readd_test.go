package sqsbatch_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/onceflow/onceflow/internal/testenv"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// a/1 commits, a/2 behind it in the same batch makes every invocation time out (Lambda kills
// it: nothing of the batch is acknowledged), so both come back on every receive. On the last
// receives the backstop holds the group naming each message before handling it: a/1, already
// applied, is then put on the hold after a/2, and its duplicate, not heading the hold, does not
// take it off. The queue moves both. Once the cause is fixed and the letters are redriven in
// order, the group must go on: a/3 applied after a/1 and a/2, nothing held.
func TestReview_an_applied_message_received_again_is_not_left_on_the_hold(t *testing.T) {
	const maxReceiveCount = 4
	r := newRedrive(t)
	h := timingOut{redrive: r, hangs: map[string]bool{r.eventID(t, "a/2"): true}}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	records := testenv.CreateTable(t, r.db, "idem", false)
	p, err := sqsbatch.NewConsumer(r.db, h, idempotency.Config{Name: "ledger", Table: records, Logger: quiet,
		AfterDeadLetter: idempotency.HoldGroup, Retry: idempotency.Retry{Margin: 50 * time.Millisecond}},
		sqsbatch.Config{DeadLetter: r, DeadlineMargin: 10 * time.Millisecond, MaxReceiveCount: maxReceiveCount})
	if err != nil {
		t.Fatal(err)
	}
	q := newFIFOQueue(t, maxReceiveCount, "a/1", "a/2")
	for range 3 * maxReceiveCount {
		ev := q.receive()
		if len(ev.Records) == 0 {
			break
		}
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		handle(t, p, ctx, ev) // timed out: Lambda acknowledges nothing of the batch
		cancel()
	}
	if !slices.Equal(q.redriven, []string{"a/1", "a/2"}) {
		t.Fatalf("the queue moved %v; want a/1 and a/2", q.redriven)
	}
	admin := idempotency.NewAdmin(r.db, records)
	hold, _, _ := admin.Hold(t.Context(), "ledger", "a")
	t.Logf("hold after the queue moved both: %v", hold.Held)

	delete(h.hangs, r.eventID(t, "a/2"))       // the cause is fixed
	for _, m := range []string{"a/1", "a/2"} { // the redrive, in order, new message ids
		q.send(t, m+"@"+m+"-redriven")
	}
	q.drain(t, p)
	q.send(t, "a/3")
	q.drain(t, p)
	if hold, ok, err := admin.Hold(t.Context(), "ledger", "a"); err != nil || ok {
		t.Errorf("after the redrive group a is still held: %v (%v, %v)", hold.Held, ok, err)
	}
	want := []string{r.eventID(t, "a/1"), r.eventID(t, "a/2"), r.eventID(t, "a/3")}
	if got := r.applied(t, "a"); !slices.Equal(got, want) {
		t.Errorf("group a applied %v; want %v", got, want)
	}
}
