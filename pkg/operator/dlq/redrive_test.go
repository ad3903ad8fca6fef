package dlq_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A redrive sends a letter back under a fresh deduplication id, carrying the id its message
// was first sent as. The letter's own deduplication id (the event id) is often under five
// minutes old: SQS would drop that send as a repeat of the original, and the letter would
// never go back.
func TestRedrive_sends_a_letter_back_under_a_fresh_deduplication_id(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := testkit.SQS(t)
	src, dlqURL := testkit.CreateFIFOQueue(t, c, "src"), testkit.CreateFIFOQueue(t, c, "dlq")
	body := `{"specversion":"1.0","id":"evt-1","source":"test","type":"t"}`
	sent, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(src), MessageGroupId: aws.String("g"),
		MessageDeduplicationId: aws.String("evt-1"), MessageBody: aws.String(body)})
	if err != nil {
		t.Fatal(err)
	}
	if got := testkit.Drain(t, c, src); len(got) != 1 { // received, failed, dead-lettered below
		t.Fatalf("source queue holds %d messages; want the one sent", len(got))
	}
	first := aws.ToString(sent.MessageId)
	if err := deadletter.New(c, dlqURL).DeadLetter(ctx, events.SQSMessage{MessageId: first, Body: body,
		EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:src.fifo", Attributes: map[string]string{"MessageGroupId": "g",
			"MessageDeduplicationId": "evt-1", "ApproximateReceiveCount": "5"}}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	outcomes := map[dlq.Outcome]int{}
	if err := dlq.Redrive(ctx, dlq.RedriveConfig{Client: c, Queue: dlqURL, To: src}, func(r dlq.Redriven) { outcomes[r.Outcome]++ }); err != nil {
		t.Fatal(err)
	}
	if outcomes[dlq.Moved] != 1 {
		t.Errorf("outcomes %v; want the letter moved", outcomes)
	}
	back := testkit.Drain(t, c, src)
	if len(back) != 1 || aws.ToString(back[0].Body) != body {
		t.Fatalf("source queue got %d messages; want the letter back", len(back))
	}
	if got := aws.ToString(back[0].MessageAttributes[deadletter.AttrOriginalMessageID].StringValue); got != first {
		t.Errorf("redriven message carries %s %q; want %q, the id it was first sent as", deadletter.AttrOriginalMessageID, got, first)
	}
	if left := testkit.Drain(t, c, dlqURL); len(left) != 0 {
		t.Errorf("dead-letter queue holds %d letters; want none", len(left))
	}
}
