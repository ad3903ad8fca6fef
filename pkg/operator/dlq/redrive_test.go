package dlq_test

import (
	"errors"
	"maps"
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

// A letter that comes into the dead-letter queue while a redrive runs is left in place: nobody
// has looked at it yet. It may be the letter of the message that takes its group's batches down
// (SQS moves it after a crash loop, at any moment); sent back before the operator decided it, it
// takes down the batches of the letters the redrive sent before it, for ever (the model's
// scenarios 20 and 21, docs/recovery-model.md). The redrive knows such a letter by the time the
// dead-letter queue took it (SentTimestamp, which a FIFO queue sets anew when SQS moves a
// message to it).
func TestRedrive_leaves_a_letter_that_came_in_after_it_began(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := testkit.SQS(t)
	src, dlqURL := testkit.CreateFIFOQueue(t, c, "src"), testkit.CreateFIFOQueue(t, c, "dlq")
	letter := func(id, group string) {
		t.Helper()
		body := `{"specversion":"1.0","id":"` + id + `","source":"test","type":"t"}`
		if err := deadletter.New(c, dlqURL).DeadLetter(ctx, events.SQSMessage{MessageId: "m-" + id, Body: body,
			EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:src.fifo", Attributes: map[string]string{"MessageGroupId": group,
				"MessageDeduplicationId": id, "ApproximateReceiveCount": "5"}}, errors.New("failed 5 times")); err != nil {
			t.Fatal(err)
		}
	}
	letter("evt-1", "g")
	outcomes := map[string]dlq.Outcome{}
	err := dlq.Redrive(ctx, dlq.RedriveConfig{Client: c, Queue: dlqURL, To: src}, func(r dlq.Redriven) {
		outcomes[r.Letter.EventID] = r.Outcome
		if r.Letter.EventID == "evt-1" { // while the redrive runs: a letter behind it, one of another group
			letter("evt-2", "g")
			letter("evt-3", "h")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]dlq.Outcome{"evt-1": dlq.Moved, "evt-2": dlq.Late, "evt-3": dlq.Late}
	if !maps.Equal(outcomes, want) {
		t.Errorf("outcomes %v; want %v: a letter that came in after the redrive began is left for the operator's look", outcomes, want)
	}
	if back := testkit.Drain(t, c, src); len(back) != 1 {
		t.Errorf("source queue got %d messages; want evt-1's alone", len(back))
	}
	if left := testkit.Drain(t, c, dlqURL); len(left) != 2 {
		t.Errorf("dead-letter queue holds %d letters; want the two that came in late", len(left))
	}
}
