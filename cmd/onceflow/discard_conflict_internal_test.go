package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/port"
)

// A conflict's letter (an applied event's id reused with another payload) is discarded: the
// applied event's record stays, and the letter's copy (its body, who, why) must still be
// findable with record get, as every discarded letter is (the drill found it was lost).
func TestDLQ_discard_of_a_conflict_keeps_the_letters_copy_for_record_get(t *testing.T) {
	c := newCloud(t)
	consumer := c.ledger(t)
	if res, err := apply(t, consumer, "dup-1", "acct-6"); err != nil || res.Outcome != "applied" {
		t.Fatalf("apply dup-1 = %+v, %v", res, err)
	}
	ev, err := cloudevent.New("dup-1", "test", "account.credited", "acct-6", time.Now(), map[string]int{"amount": 77})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := cloudevent.Encode(ev)
	msg := events.SQSMessage{MessageId: "m-dup-1-again", Body: string(body), EventSourceARN: c.e.Queues["LedgerQueue"].ARN,
		Attributes: map[string]string{"MessageGroupId": "acct-6", "MessageDeduplicationId": "dup-1-again"}}
	reason := errors.New("event id reused with another payload: dup-1")
	if err := holdAhead(t.Context(), consumer, "acct-6", port.Held{EventID: "dup-1", MessageID: "m-dup-1-again"}, reason); err != nil {
		t.Fatal(err)
	}
	if err := deadletter.New(c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL).DeadLetter(t.Context(), msg, reason); err != nil {
		t.Fatal(err)
	}
	code, out := c.onceflow(t, "", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "reused id", "--by", "ops", "--yes", "dup-1")
	if code != 0 || !strings.Contains(out, "deleted letter") || !strings.Contains(out, "not held") {
		t.Fatalf("dlq discard: %d; want the letter deleted and the group released\n%s", code, out)
	}
	code, out = c.onceflow(t, "", "record", "get", "--consumer", "ledger", "dup-1")
	if code != 0 || !strings.Contains(out, `"outcome": "applied"`) {
		t.Errorf("record get: %d; want the applied record kept\n%s", code, out)
	}
	if !strings.Contains(out, `\"amount\":77`) || !strings.Contains(out, "reused id") || !strings.Contains(out, `"operator": "ops"`) {
		t.Errorf("record get: want the discarded letter's copy (its body with amount 77, who, why)\n%s", out)
	}
}
