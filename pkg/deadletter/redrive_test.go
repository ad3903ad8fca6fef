package deadletter_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

func queueARN(t *testing.T, c *sqs.Client, url string) string {
	t.Helper()
	out, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatalf("queue arn: %v", err)
	}
	return out.Attributes[string(types.QueueAttributeNameQueueArn)]
}

// deadLettered is a message of group received from sourceARN and dead-lettered by a consumer.
func deadLettered(sourceARN, group, eventID, typ string) events.SQSMessage {
	return events.SQSMessage{
		MessageId:      "msg-" + eventID,
		Body:           fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"test","type":%q}`, eventID, typ),
		EventSourceARN: sourceARN,
		Attributes:     map[string]string{"MessageGroupId": group, "MessageDeduplicationId": eventID, "ApproximateReceiveCount": "1"},
	}
}

func redrive(t *testing.T, cfg dlq.RedriveConfig) map[string]dlq.Outcome {
	t.Helper()
	outcomes := map[string]dlq.Outcome{}
	err := dlq.Redrive(t.Context(), cfg, func(r dlq.Redriven) {
		outcomes[r.Letter.EventID] = r.Outcome
		if r.Err != nil {
			t.Logf("%s: %v", r.Letter.EventID, r.Err)
		}
	})
	if err != nil {
		t.Fatalf("Redrive: %v", err)
	}
	return outcomes
}

// bodyID is the event id in a message's body.
func bodyID(m types.Message) string {
	var ev struct{ ID string }
	_ = json.Unmarshal([]byte(aws.ToString(m.Body)), &ev)
	return ev.ID
}

func TestRedrive_moves_letters_to_their_source_queue_in_order_with_group_and_a_fresh_dedup_id(t *testing.T) {
	t.Parallel()
	c := client(t)
	src, dlqURL := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
	q := deadletter.New(c, dlqURL)
	for i := range 3 {
		id := "evt-" + strconv.Itoa(i)
		if err := q.DeadLetter(t.Context(), deadLettered(queueARN(t, c, src), "acct-1", id, "account.credited"), errors.New("bad")); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL})
	for id, o := range outcomes {
		if o != dlq.Moved {
			t.Errorf("%s: %s; want moved", id, o)
		}
	}
	got := receiveAll(t, c, src)
	if len(got) != 3 {
		t.Fatalf("source queue holds %d messages; want 3", len(got))
	}
	for i, m := range got {
		want := "evt-" + strconv.Itoa(i)
		if bodyID(m) != want || m.Attributes["MessageGroupId"] != "acct-1" {
			t.Errorf("message %d: event %q group %q; want %q and acct-1 (in the dead-letter queue's order)",
				i, bodyID(m), m.Attributes["MessageGroupId"], want)
		}
		if dedup := m.Attributes["MessageDeduplicationId"]; dedup == want || dedup == "" {
			t.Errorf("message %d: dedup id %q; want a fresh one, not the event id SQS may still drop", i, dedup)
		}
		// Only the id it was first sent as, never the dead letter's own attributes.
		if _, ok := m.MessageAttributes[deadletter.AttrOriginalMessageID]; len(m.MessageAttributes) != 1 || !ok {
			t.Errorf("message %d carries attributes %v; want %s only, not the dead letter's", i, names(m.MessageAttributes), deadletter.AttrOriginalMessageID)
		}
	}
	if left := receiveAll(t, c, dlqURL); len(left) != 0 {
		t.Errorf("dead-letter queue still holds %d letters", len(left))
	}
}

func TestRedrive_filter_leaves_other_letters_and_the_rest_of_their_group_in_place(t *testing.T) {
	t.Parallel()
	c := client(t)
	src, dlqURL := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
	arn := queueARN(t, c, src)
	q := deadletter.New(c, dlqURL)
	for _, m := range []events.SQSMessage{
		deadLettered(arn, "g1", "a1", "note.created"),
		deadLettered(arn, "g1", "a2", "account.credited"), // behind a1, which the filter leaves
		deadLettered(arn, "g2", "b1", "account.credited"),
	} {
		if err := q.DeadLetter(t.Context(), m, errors.New("bad")); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL, Filter: dlq.Filter{EventType: "account.credited"}})
	if outcomes["b1"] != dlq.Moved || outcomes["a1"] != dlq.Skipped {
		t.Errorf("outcomes %v; want b1 moved, a1 skipped", outcomes)
	}
	if o, seen := outcomes["a2"]; seen && o != dlq.Behind {
		t.Errorf("a2: %s; want it left behind a1 (order per group)", o)
	}
	if got := receiveAll(t, c, src); len(got) != 1 || bodyID(got[0]) != "b1" {
		t.Errorf("source queue got %d messages; want b1 only", len(got))
	}
	if left := receiveAll(t, c, dlqURL); len(left) != 2 {
		t.Errorf("dead-letter queue holds %d letters; want a1 and a2, visible again", len(left))
	}
}

// A redrive of one group (onceflow dlq redrive --group) sends only that group's letters: the
// letters of another group, which the operator has not decided (one may have come in after the
// operator looked), stay in place for the next look.
func TestRedrive_of_one_group_leaves_every_other_groups_letters(t *testing.T) {
	t.Parallel()
	c := client(t)
	src, dlqURL := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
	arn := queueARN(t, c, src)
	q := deadletter.New(c, dlqURL)
	for _, m := range []events.SQSMessage{
		deadLettered(arn, "g1", "a1", "t"),
		deadLettered(arn, "g2", "b1", "t"),
		deadLettered(arn, "g1", "a2", "t"),
	} {
		if err := q.DeadLetter(t.Context(), m, errors.New("bad")); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL, Filter: dlq.Filter{Group: "g1"}})
	if outcomes["a1"] != dlq.Moved || outcomes["a2"] != dlq.Moved || outcomes["b1"] != dlq.Skipped {
		t.Errorf("outcomes %v; want a1 and a2 moved, b1 skipped", outcomes)
	}
	got := receiveAll(t, c, src)
	if len(got) != 2 || bodyID(got[0]) != "a1" || bodyID(got[1]) != "a2" {
		t.Errorf("source queue got %d messages; want a1 then a2", len(got))
	}
	if left := receiveAll(t, c, dlqURL); len(left) != 1 || bodyID(left[0]) != "b1" {
		t.Errorf("dead-letter queue holds %d letters; want b1's alone", len(left))
	}
}

// A letter sent back within five minutes of its original send is not dropped by SQS as a
// repeat: its deduplication id is fresh.
func TestRedrive_sends_a_letter_within_the_dedup_window_of_its_original(t *testing.T) {
	t.Parallel()
	c := client(t)
	dlqURL := createQueue(t, c, true, nil)
	src := createQueue(t, c, true, map[string]string{"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"1"}`, queueARN(t, c, dlqURL))})
	if _, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(src), MessageGroupId: aws.String("g"),
		MessageDeduplicationId: aws.String("evt-crash"), MessageBody: aws.String(`{"id":"evt-crash","type":"t"}`)}); err != nil {
		t.Fatal(err)
	}
	// Received and never deleted (the consumer crashed): SQS moves it on the next receive.
	for range 2 {
		out, err := c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(src)})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			if _, err := c.ChangeMessageVisibility(t.Context(), &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(src),
				ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var letters []deadletter.Letter
	if err := dlq.Browse(t.Context(), c, dlqURL, func(l deadletter.Letter) bool { letters = append(letters, l); return true }); err != nil {
		t.Fatal(err)
	}
	if len(letters) != 1 || letters[0].SourceQueueARN != "" || letters[0].DedupID != "evt-crash" || letters[0].Reason != "" {
		t.Fatalf("letters %+v; want the moved message, its own dedup id, no source and no reason", letters)
	}
	// Without a source queue, a redrive needs one named.
	if o := redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL}); o["evt-crash"] != dlq.Failed {
		t.Errorf("redrive without a destination: %v; want failed", o)
	}
	// Named: within five minutes of the original send, under a fresh deduplication id.
	if o := redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL, To: src}); o["evt-crash"] != dlq.Moved {
		t.Errorf("redrive within the dedup window: %v; want moved", o)
	}
	if got := receiveAll(t, c, src); len(got) != 1 || bodyID(got[0]) != "evt-crash" {
		t.Errorf("source queue got %d messages; want evt-crash back", len(got))
	}
	if left := receiveAll(t, c, dlqURL); len(left) != 0 {
		t.Errorf("dead-letter queue holds %d letters; want none", len(left))
	}
}

// lettersOfThreeGroups makes a FIFO dead-letter queue holding one letter of each of the
// groups g1, g2 and g3, dead-lettered in that order with the reasons "why g1" and so on.
func lettersOfThreeGroups(t *testing.T, c *sqs.Client) string {
	t.Helper()
	dlqURL := createQueue(t, c, true, nil)
	q := deadletter.New(c, dlqURL)
	for _, g := range []string{"g1", "g2", "g3"} {
		if err := q.DeadLetter(t.Context(), deadLettered("arn:aws:sqs:us-east-1:000000000000:x.fifo", g, "e-"+g, "t"), errors.New("why "+g)); err != nil {
			t.Fatal(err)
		}
	}
	return dlqURL
}

func TestBrowse_leaves_every_letter_in_the_queue(t *testing.T) {
	t.Parallel()
	c := client(t)
	dlqURL := lettersOfThreeGroups(t, c)
	var reasons []string
	if err := dlq.Browse(t.Context(), c, dlqURL, func(l deadletter.Letter) bool { reasons = append(reasons, l.Why()); return true }); err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 3 || reasons[0] != "why g1" {
		t.Errorf("reasons %q; want the three, in order", reasons)
	}
	if left := receiveAll(t, c, dlqURL); len(left) != 3 {
		t.Errorf("queue holds %d letters after Browse; want 3", len(left))
	}
}

func TestBrowse_stopping_early_leaves_the_whole_batch_visible(t *testing.T) {
	t.Parallel()
	c := client(t)
	dlqURL := lettersOfThreeGroups(t, c)
	if err := dlq.Browse(t.Context(), c, dlqURL, func(deadletter.Letter) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if left := receiveAll(t, c, dlqURL); len(left) != 3 {
		t.Errorf("%d letters visible after Browse stopped at the first; want 3 (the rest of its batch hidden for minutes)", len(left))
	}
}

func TestBrowse_reads_an_outbox_item_the_relay_parked(t *testing.T) {
	t.Parallel()
	c := client(t)
	park := createQueue(t, c, true, nil)
	body := `{"reason":"body: character U+FFFE at byte 12, which SQS refuses","sequenceNumber":"1","eventId":"evt-p","eventType":"note.created","subject":"n-1","body":"e30=","parkedAt":"2026-11-30T10:00:00Z"}`
	if _, err := c.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(park), MessageBody: aws.String(body),
		MessageGroupId: aws.String("outbox-parked"), MessageDeduplicationId: aws.String("parked-1")}); err != nil {
		t.Fatal(err)
	}
	var got []deadletter.Letter
	if err := dlq.Browse(t.Context(), c, park, func(l deadletter.Letter) bool { got = append(got, l); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].EventID != "evt-p" || got[0].EventType != "note.created" || !strings.Contains(got[0].Why(), "U+FFFE") {
		t.Errorf("letters %+v; want the parked event's id, type and reason", got)
	}
}

// A letter that fails again at once comes back to the dead-letter queue while the redrive
// still reads it: it must not be sent again in the same run, or a standard queue (no
// deduplication) loops, and a FIFO one loops again once five minutes have passed.
func TestRedrive_leaves_a_letter_that_failed_again_during_the_redrive(t *testing.T) {
	t.Parallel()
	c := client(t)
	src, dlqURL := createQueue(t, c, false, nil), createQueue(t, c, false, nil)
	arn := queueARN(t, c, src)
	q := deadletter.New(c, dlqURL)
	if err := q.DeadLetter(t.Context(), deadLettered(arn, "", "evt-again", "t"), errors.New("bad")); err != nil {
		t.Fatal(err)
	}
	var outcomes []dlq.Outcome
	err := dlq.Redrive(t.Context(), dlq.RedriveConfig{Client: c, Queue: dlqURL}, func(r dlq.Redriven) {
		outcomes = append(outcomes, r.Outcome)
		if r.Outcome != dlq.Moved || len(outcomes) > 3 {
			return
		}
		// The consumer takes the redriven message and dead-letters it again.
		for _, m := range receiveAll(t, c, src) {
			again := deadLettered(arn, "", "evt-again", "t")
			again.MessageId = aws.ToString(m.MessageId)
			if err := q.DeadLetter(t.Context(), again, errors.New("bad again")); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(outcomes) != 2 || outcomes[0] != dlq.Moved || outcomes[1] != dlq.Again {
		t.Errorf("outcomes %v; want [moved again]: the letter that failed again is left for the operator", outcomes)
	}
	if left := receiveAll(t, c, dlqURL); len(left) != 1 || attr(left[0], deadletter.AttrReason) != "bad again" {
		t.Errorf("dead-letter queue holds %d letters; want the one that failed again", len(left))
	}
}
