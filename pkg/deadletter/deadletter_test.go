package deadletter_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// client returns an SQS client for the emulator that SQS_ENDPOINT points at. Every test of the
// package runs in parallel: each on queues (createQueue) and a bucket of its own, and none
// changes anything of the process.
func client(t *testing.T) *sqs.Client {
	t.Helper()
	endpoint := testkit.Emulator(t, testkit.SQSEndpointVariable)
	return sqs.New(sqs.Options{
		Region:           "us-east-1",
		Credentials:      testkit.Config().Credentials,
		BaseEndpoint:     aws.String(endpoint),
		RetryMaxAttempts: 1,
	})
}

// createQueue creates a queue with a name unique to this test run and attributes attrs;
// fifo adds ".fifo".
func createQueue(t *testing.T, c *sqs.Client, fifo bool, attrs map[string]string) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	name := "dlq-" + hex.EncodeToString(b)
	if attrs == nil {
		attrs = map[string]string{}
	}
	if fifo {
		name += ".fifo"
		attrs[string(types.QueueAttributeNameFifoQueue)] = "true"
	}
	out, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("create queue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

// receiveAll drains the queue, deleting what it receives.
func receiveAll(t *testing.T, c *sqs.Client, url string) []types.Message {
	t.Helper()
	var all []types.Message
	for {
		out, err := c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(url),
			MaxNumberOfMessages:         10,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		for _, m := range out.Messages {
			if _, err := c.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("delete: %v", err)
			}
		}
		all = append(all, out.Messages...)
	}
}

func source(id string) events.SQSMessage {
	return events.SQSMessage{
		MessageId:      id,
		Body:           `{"specversion":"1.0","id":"evt-1","source":"test","type":"nope"}`,
		EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:orders.fifo",
		EventSource:    "aws:sqs",
		Attributes: map[string]string{
			"MessageGroupId":          "account-42",
			"MessageDeduplicationId":  "evt-1",
			"ApproximateReceiveCount": "3",
		},
	}
}

func attr(m types.Message, name string) string {
	return aws.ToString(m.MessageAttributes[name].StringValue)
}

func TestQueue_dead_letters_body_group_and_reason_to_a_fifo_queue(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, true, nil)
	msg := source("msg-1")
	before := time.Now().Add(-time.Second)
	if err := deadletter.New(c, url).DeadLetter(t.Context(), msg, errors.New(`malformed message: type: "nope" is not handled`)); err != nil {
		t.Fatalf("DeadLetter: %v", err)
	}
	got := receiveAll(t, c, url)
	if len(got) != 1 {
		t.Fatalf("received %d messages; want 1", len(got))
	}
	m := got[0]
	checks := []struct{ name, got, want string }{
		{"body", aws.ToString(m.Body), msg.Body},
		{"MessageGroupId", m.Attributes["MessageGroupId"], "account-42"},
		{"MessageDeduplicationId", m.Attributes["MessageDeduplicationId"], "msg-1"},
		{"reason", attr(m, deadletter.AttrReason), `malformed message: type: "nope" is not handled`},
		{"sourceMessageId", attr(m, deadletter.AttrSourceMessageID), "msg-1"},
		{"sourceQueueArn", attr(m, deadletter.AttrSourceQueueARN), msg.EventSourceARN},
		{"sourceGroupId", attr(m, deadletter.AttrSourceGroupID), "account-42"},
		{"sourceDedupId", attr(m, deadletter.AttrSourceDedupID), "evt-1"},
		{"receiveCount", attr(m, deadletter.AttrReceiveCount), "3"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q; want %q", c.name, c.got, c.want)
		}
	}
	at, err := time.Parse(time.RFC3339, attr(m, deadletter.AttrDeadLetteredAt))
	if err != nil || at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("deadLetteredAt = %q (%v); want an RFC 3339 time of now", attr(m, deadletter.AttrDeadLetteredAt), err)
	}
}

func TestQueue_dead_lettering_a_message_twice_stores_it_once(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, true, nil)
	q := deadletter.New(c, url)
	// The function crashed after the first dead-letter send: the same delivery comes back.
	for range 2 {
		if err := q.DeadLetter(t.Context(), source("msg-1"), errors.New("bad")); err != nil {
			t.Fatalf("DeadLetter: %v", err)
		}
	}
	if got := receiveAll(t, c, url); len(got) != 1 {
		t.Errorf("queue holds %d messages; want 1", len(got))
	}
}

func TestQueue_a_redriven_message_that_fails_again_is_dead_lettered_again(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, true, nil)
	q := deadletter.New(c, url)
	// Redriven to its queue, the event comes back as a new message with the same dedup id and
	// fails again within five minutes: the broker must not drop the second dead letter.
	for _, id := range []string{"msg-1", "msg-1-redriven"} {
		if err := q.DeadLetter(t.Context(), source(id), errors.New("bad")); err != nil {
			t.Fatalf("DeadLetter: %v", err)
		}
	}
	if got := receiveAll(t, c, url); len(got) != 2 {
		t.Errorf("queue holds %d messages; want 2: a dead letter silently dropped would lose the message", len(got))
	}
}

func TestQueue_keeps_a_short_reason_even_beside_a_large_body(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, true, nil) // SQS's (and the emulator's) default: 1 MiB
	msg := source("msg-large")
	msg.Body = strings.Repeat("x", 256*1024-64) // nothing left of a 256 KiB budget
	if err := deadletter.New(c, url).DeadLetter(t.Context(), msg, errors.New("malformed message: id: missing; "+strings.Repeat("detail ", 100))); err != nil {
		t.Fatalf("DeadLetter: %v", err)
	}
	got := receiveAll(t, c, url)
	if len(got) != 1 {
		t.Fatalf("received %d messages; want 1", len(got))
	}
	if r := attr(got[0], deadletter.AttrReason); !strings.HasPrefix(r, "malformed message: id: missing") {
		t.Errorf("reason = %q; want at least its beginning", r)
	}
}

func TestQueue_truncates_a_long_reason_to_fit(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, true, map[string]string{
		// The limit queues had for years (and the emulator enforces): body and attributes must fit.
		string(types.QueueAttributeNameMaximumMessageSize): "262144",
	})
	msg := source("msg-big")
	msg.Body = strings.Repeat("x", 255*1024) // leaves under 1 KiB for the attributes
	reason := errors.New(strings.Repeat("é", 10_000) + "\x00\xff")
	if err := deadletter.New(c, url).DeadLetter(t.Context(), msg, reason); err != nil {
		t.Fatalf("DeadLetter: %v", err)
	}
	got := receiveAll(t, c, url)
	if len(got) != 1 {
		t.Fatalf("received %d messages; want 1", len(got))
	}
	r := attr(got[0], deadletter.AttrReason)
	if len(r) == 0 || len(r) > 1024 || !utf8.ValidString(r) || !strings.HasSuffix(r, "…") {
		t.Errorf("reason is %d bytes, valid UTF-8 %v, %q…; want a short valid reason ending in …",
			len(r), utf8.ValidString(r), r[:min(len(r), 12)])
	}
	if aws.ToString(got[0].Body) != msg.Body {
		t.Error("body changed")
	}
}

func TestQueue_dead_letters_to_a_standard_queue(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, false, nil)
	msg := source("msg-std")
	if err := deadletter.New(c, url).DeadLetter(t.Context(), msg, errors.New("bad")); err != nil {
		t.Fatalf("DeadLetter: %v", err)
	}
	got := receiveAll(t, c, url)
	if len(got) != 1 || aws.ToString(got[0].Body) != msg.Body || attr(got[0], deadletter.AttrReason) != "bad" {
		t.Fatalf("received %+v; want the body with reason \"bad\"", got)
	}
}

func TestQueue_wraps_send_errors_with_the_message_id(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, true, nil)
	missing := strings.Replace(url, "dlq-", "missing-", 1)
	err := deadletter.New(c, missing).DeadLetter(context.Background(), source("msg-lost"), errors.New("bad"))
	if err == nil || !strings.HasPrefix(err.Error(), "dead-letter message msg-lost: ") {
		t.Errorf("error = %v; want it to start with \"dead-letter message msg-lost: \"", err)
	}
}
