package sqsbatch_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// missing answers that the object of the messages it names does not exist (permanent, as
// claimcheck.Reader does for NoSuchKey) until restore is called; every other payload is the body.
type missing struct {
	mu   sync.Mutex
	gone map[string]bool // event body -> object missing
}

func (m *missing) Payload(_ context.Context, msg events.SQSMessage) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gone[msg.Body] {
		return "", &claimcheck.ObjectError{Pointer: claimcheck.Pointer{Bucket: "payloads", Key: "k"}, Reason: "no such object"}
	}
	return msg.Body, nil
}

func (m *missing) restore() { m.mu.Lock(); clear(m.gone); m.mu.Unlock() }

// a/1's object is missing: it is dead-lettered and holds its group; a/2 is held behind it.
// The object is restored (docs/large-payloads.md: a redrive reads the object again while it
// exists) and the dead-letter queue redriven in order: the group must be applied in order,
// and released.
func TestClaimCheck_redriven_once_its_object_is_back_releases_its_group(t *testing.T) {
	r := newRedrive(t)
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	records := testkit.Table(t, r.db, "idem", "pk")
	payloads := &missing{gone: map[string]bool{}}
	p, err := sqsbatch.NewConsumer(r.db, r, idempotency.Config{Name: "ledger", Table: records, Logger: quiet,
		AfterDeadLetter: idempotency.HoldGroup}, sqsbatch.Config{Options: batch.Options{DeadLetter: r}, Payloads: payloads})
	if err != nil {
		t.Fatal(err)
	}
	q := newFIFOQueue(t, backstop, "a/1", "a/2")
	payloads.gone[q.msgs[0].Body] = true
	q.drain(t, p)
	if !slices.Equal(r.deadIDs(), []string{"a/1", "a/2"}) {
		t.Fatalf("dead-lettered %v; want a/1 (object missing) and a/2 held behind it", r.deadIDs())
	}
	payloads.restore()
	for _, m := range []string{"a/1", "a/2"} { // the redrive, in order, new message ids
		q.send(t, m+"@"+m+"-redriven")
	}
	q.drain(t, p)
	want := []string{r.eventID(t, "a/1"), r.eventID(t, "a/2")}
	if got := r.applied(t, "a"); !slices.Equal(got, want) {
		t.Errorf("after the redrive group a applied %v; want %v", got, want)
	}
	if hold, ok, err := operator.New(r.db, records).Hold(t.Context(), "ledger", "a"); err != nil || ok {
		t.Errorf("after the redrive group a is still held: %v (%v, %v)", hold.Held, ok, err)
	}
}
