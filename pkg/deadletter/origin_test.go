package deadletter_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

// A redrive sends each letter with the id its message was first sent as, and a letter of a
// message redriven before keeps that first id, however often it comes back: the group's held
// list knows the message by it. The event id the consumer decoded travels on the letter.
func TestRedrive_sends_the_id_each_message_was_first_sent_as(t *testing.T) {
	t.Parallel()
	c := client(t)
	src, dlqURL := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
	arn := queueARN(t, c, src)
	first := events.SQSMessage{MessageId: "m-first", Body: `{"id":"eb-1"}`, EventSourceARN: arn,
		Attributes: map[string]string{"MessageGroupId": "acct-1"}}
	again := events.SQSMessage{MessageId: "m-again", Body: `{"id":"eb-2"}`, EventSourceARN: arn,
		Attributes:        map[string]string{"MessageGroupId": "acct-2"}, // another group: both in view at once
		MessageAttributes: map[string]events.SQSMessageAttribute{deadletter.AttrOriginalMessageID: {DataType: "String", StringValue: aws.String("m-0")}}}
	q := deadletter.New(c, dlqURL)
	if err := q.DeadLetter(t.Context(), first, deadletter.WithEventID(errors.New("bad"), "mv-1")); err != nil {
		t.Fatal(err)
	}
	if err := q.DeadLetter(t.Context(), again, errors.New("bad")); err != nil {
		t.Fatal(err)
	}
	letters := map[string]deadletter.Letter{} // by source message
	if err := dlq.Browse(t.Context(), c, dlqURL, func(l deadletter.Letter) bool { letters[l.SourceMessage] = l; return true }); err != nil {
		t.Fatal(err)
	}
	if len(letters) != 2 || letters["m-first"].OriginalMessage != "m-first" || letters["m-again"].OriginalMessage != "m-0" {
		t.Fatalf("letters %+v; want m-first's first id m-first, m-again's m-0", letters)
	}
	if l := letters["m-first"]; l.DecodedEventID != "mv-1" || l.EventID != "mv-1" || l.Reason != "bad" {
		t.Errorf("letter names event %q (decoded %q), reason %q; want mv-1 over the body's eb-1, reason bad", l.EventID, l.DecodedEventID, l.Reason)
	}
	if l := letters["m-again"]; l.DecodedEventID != "" || l.EventID != "eb-2" {
		t.Errorf("letter without a decoded id names event %q (decoded %q); want the body's eb-2", l.EventID, l.DecodedEventID)
	}
	redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL})
	ids := map[string]string{} // body -> the first id it was sent with
	for _, m := range receiveAll(t, c, src) {
		ids[aws.ToString(m.Body)] = aws.ToString(m.MessageAttributes[deadletter.AttrOriginalMessageID].StringValue)
	}
	if len(ids) != 2 || ids[`{"id":"eb-1"}`] != "m-first" || ids[`{"id":"eb-2"}`] != "m-0" {
		t.Errorf("redriven messages carry first ids %v; want m-first and m-0", ids)
	}
}
