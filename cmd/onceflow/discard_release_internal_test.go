package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/envelope"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
)

// A HoldGroup consumer of EventBridge events keys them by a business key from the detail (the
// EventBridge id is new on every PutEvents). Its bad message holds the group under that key
// and is dead-lettered; the runbook's dlq discard must then record the business key as
// discarded and release the group, and a redelivery under a new EventBridge id be answered.
func TestDLQDiscard_of_an_EventBridge_letter_releases_its_group(t *testing.T) {
	c := newCloud(t)
	consumer := c.ledger(t)
	dlq := deadletter.New(c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL)
	body := `{"version":"0","id":"eb-1111","detail-type":"account.credited","source":"bank","account":"1","time":"2026-12-01T10:00:00Z","region":"us-east-1","resources":[],"detail":{"movementId":"mv-1","amount":"x"}}`
	msg := events.SQSMessage{MessageId: "m-eb-1", Body: body, EventSourceARN: c.e.Queues["LedgerQueue"].ARN,
		Attributes: map[string]string{"MessageGroupId": "acct-9", "MessageDeduplicationId": "mv-1"}}
	ev, err := envelope.EventBridge{Key: []string{"movementId"}}.Decode(t.Context(), msg)
	if err != nil || ev.ID != "mv-1" {
		t.Fatalf("decode = %+v, %v", ev, err)
	}
	reason := errors.New(`malformed message: data.amount: not a number`)
	// What sqsbatch does for a message that fails permanently: hold under the decoded id, then dead-letter.
	if err := holdAhead(t.Context(), consumer, "acct-9", port.Held{EventID: ev.ID, MessageID: msg.MessageId}, reason); err != nil {
		t.Fatal(err)
	}
	if err := dlq.DeadLetter(t.Context(), msg, reason); err != nil {
		t.Fatal(err)
	}
	code, out := c.onceflow(t, "", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "producer bug", "--by", "ops", "--yes", "m-eb-1")
	if code != 0 || !strings.Contains(out, "deleted letter") {
		t.Fatalf("dlq discard: %d", code)
	}
	if h, held, err := operator.New(c.db, c.tableName("IdempotencyTable")).Hold(t.Context(), "ledger", "acct-9"); err != nil || held {
		t.Errorf("after the discard (letter deleted) the group is still held: %+v, %v", h.Held, err)
	}
	again := msg
	again.MessageId, again.Body = "m-eb-2", strings.Replace(body, "eb-1111", "eb-2222", 1) // the publisher's retry: new EventBridge id
	ev2, _ := envelope.EventBridge{Key: []string{"movementId"}}.Decode(t.Context(), again)
	res, err := consumer.Apply(t.Context(), ev2, port.Delivery{MessageID: again.MessageId, Group: "acct-9"})
	if res.Outcome != idempotency.Duplicate || res.Stored != idempotency.Discarded {
		t.Errorf("redelivery of the discarded event = %+v, %v; want a duplicate of the discarded one", res, err)
	}
}

// The same with the default decoder behind a claim check: the letter's body is the extended
// client's pointer, so the tool finds no event id in it; the consumer held the group under the
// event id of the payload it read. Discarding the letter must release the group.
func TestDLQDiscard_of_a_claim_check_letter_releases_its_group(t *testing.T) {
	c := newCloud(t)
	consumer := c.ledger(t)
	dlq := deadletter.New(c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL)
	pointer := claimcheck.Pointer{Bucket: "payloads", Key: "ev-big-1"}
	msg := events.SQSMessage{MessageId: "m-big-1", Body: pointer.Body(), EventSourceARN: c.e.Queues["LedgerQueue"].ARN,
		Attributes: map[string]string{"MessageGroupId": "acct-8", "MessageDeduplicationId": "big-1"},
		MessageAttributes: map[string]events.SQSMessageAttribute{claimcheck.SizeAttribute: {DataType: "Number",
			StringValue: aws.String("3145728")}}}
	reason := errors.New(`event id "big-1" reused with another payload`)
	if err := holdAhead(t.Context(), consumer, "acct-8", port.Held{EventID: "big-1", MessageID: msg.MessageId}, reason); err != nil { // as sqsbatch does, with the payload's id
		t.Fatal(err)
	}
	if err := dlq.DeadLetter(t.Context(), msg, reason); err != nil {
		t.Fatal(err)
	}
	code, _ := c.onceflow(t, "", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "producer bug", "--by", "ops", "--yes", "m-big-1")
	if code != 0 {
		t.Fatalf("dlq discard: %d", code)
	}
	if h, held, err := operator.New(c.db, c.tableName("IdempotencyTable")).Hold(t.Context(), "ledger", "acct-8"); err != nil || held {
		t.Errorf("after the discard (letter deleted) the group is still held: %+v, %v", h.Held, err)
	}
}
