package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// A letter whose body no decoder reads has no event id: nothing can be recorded for it. The
// discard's prompt must say so before the operator answers (not promise a record it then does
// not write), and the discard still releases the group the body held and deletes the letter.
func TestDLQDiscard_of_a_letter_without_an_event_id_promises_no_record(t *testing.T) {
	c := newCloud(t)
	consumer := c.ledger(t)
	dlq := deadletter.New(c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL)
	msg := events.SQSMessage{MessageId: "m-bad-1", Body: "not json at all", EventSourceARN: c.e.Queues["LedgerQueue"].ARN,
		Attributes: map[string]string{"MessageGroupId": "acct-7", "MessageDeduplicationId": "bad-1"}}
	reason := errors.New("malformed message: invalid character 'o' in literal null")
	if err := consumer.HoldGroup(t.Context(), "acct-7", idempotency.Held{MessageID: msg.MessageId}, reason); err != nil { // as sqsbatch holds an undecodable body
		t.Fatal(err)
	}
	if err := dlq.DeadLetter(t.Context(), msg, reason); err != nil {
		t.Fatal(err)
	}
	code, out := c.onceflow(t, "", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "garbage", "--by", "ops", "--yes", "m-bad-1")
	if code != 0 || !strings.Contains(out, "deleted letter") {
		t.Fatalf("dlq discard: %d\n%s", code, out)
	}
	if strings.Contains(out, "records event") || strings.Contains(out, "(none) as discarded") {
		t.Errorf("the prompt promises a record for a letter without an event id:\n%s", out)
	}
	if !strings.Contains(out, "nothing is recorded") {
		t.Errorf("the prompt does not say that nothing is recorded:\n%s", out)
	}
	if h, held, err := idempotency.NewAdmin(c.db, c.tableName("IdempotencyTable")).Hold(t.Context(), "ledger", "acct-7"); err != nil || held {
		t.Errorf("after the discard the group is still held: %+v, %v", h.Held, err)
	}
}
