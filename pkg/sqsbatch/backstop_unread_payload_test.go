package sqsbatch_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// unreadable fails, transiently, to read the payload of the messages it names (S3 throttled,
// unreachable, or answering 403 as it does without ListBucket), and returns the body of the rest.
type unreadable map[string]bool

func (u unreadable) Payload(_ context.Context, msg events.SQSMessage) (string, error) {
	if u[msg.MessageId] {
		return "", errors.New("get object s3://payloads/k: AccessDenied (403)")
	}
	return msg.Body, nil
}

// A message whose payload cannot be read (a transient error every time) is never counted by
// the engine (no event id yet) and is moved by the queue's redrive policy at maxReceiveCount:
// nothing may leave a group unknown to it, so its group must be held, and the account's next
// movement must not be applied past it.
func TestBackstop_a_message_whose_payload_is_never_read_holds_its_group_when_the_queue_moves_it(t *testing.T) {
	const maxReceiveCount = 4
	r := newRedrive(t)
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	records := testkit.Table(t, r.db, "idem", "pk")
	p, err := sqsbatch.NewConsumer(r.db, r, idempotency.Config{Name: "ledger", Table: records, Logger: quiet,
		AfterDeadLetter: idempotency.HoldGroup},
		sqsbatch.Config{Options: batch.Options{DeadLetter: r}, MaxReceiveCount: maxReceiveCount, Payloads: unreadable{"a/1": true}})
	if err != nil {
		t.Fatal(err)
	}
	q := newFIFOQueue(t, maxReceiveCount, "a/1")
	q.drain(t, p)
	if !slices.Equal(q.redriven, []string{"a/1"}) {
		t.Fatalf("the queue moved %v; want a/1", q.redriven)
	}
	if _, ok, err := operator.New(r.db, records).Hold(t.Context(), "ledger", "a"); err != nil || !ok {
		t.Errorf("the queue moved a/1 to its dead-letter queue and group a is not held (%v, %v)", ok, err)
	}
	q.send(t, "a/2") // the account's next movement
	q.drain(t, p)
	if got := r.applied(t, "a"); len(got) != 0 {
		t.Errorf("group a applied %v past a/1, which the queue moved; want nothing while a/1 is in the dead-letter queue", strings.Join(got, " "))
	}
}
