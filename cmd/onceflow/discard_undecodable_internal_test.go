package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
)

// A letter whose body no decoder reads has no event id: no event can be recorded, only its
// message. The discard's prompt must say that before the operator answers (not promise a
// record of an event it then does not write), and the discard releases the group the body held,
// records the message and deletes the letter.
func TestDLQDiscard_of_a_letter_without_an_event_id_promises_only_its_message(t *testing.T) {
	c := newCloud(t)
	consumer := c.ledger(t)
	dlq := deadletter.New(c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL)
	msg := events.SQSMessage{MessageId: "m-bad-1", Body: "not json at all", EventSourceARN: c.e.Queues["LedgerQueue"].ARN,
		Attributes: map[string]string{"MessageGroupId": "acct-7", "MessageDeduplicationId": "bad-1"}}
	reason := errors.New("malformed message: invalid character 'o' in literal null")
	if err := holdAhead(t.Context(), consumer, "acct-7", port.Held{MessageID: msg.MessageId}, reason); err != nil { // as sqsbatch holds an undecodable body
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
	if !strings.Contains(out, "records its message m-bad-1") || !strings.Contains(out, "recorded its message m-bad-1 as discarded") {
		t.Errorf("the prompt does not say that the message is what is recorded, or the result differs:\n%s", out)
	}
	if h, held, err := operator.New(c.db, c.tableName("IdempotencyTable")).Hold(t.Context(), "ledger", "acct-7"); err != nil || held {
		t.Errorf("after the discard the group is still held: %+v, %v", h.Held, err)
	}
}
