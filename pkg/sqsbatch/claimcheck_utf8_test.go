package sqsbatch_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// SQS refuses a body that is not valid UTF-8, but a claim check's object in S3 is any bytes.
// Two events whose ids differ only in bytes that are not UTF-8 are two events: decoded with
// replacement characters they would be one id, and the second would be acknowledged as the
// first's duplicate and lost. Both are malformed, dead-lettered with a reason naming UTF-8.
func TestConsumer_dead_letters_a_claim_checked_body_that_is_not_UTF_8(t *testing.T) {
	t.Parallel()
	s := newLargeStack(t)
	for i, id := range []string{"blob-\xff", "blob-\xfe"} {
		body := `{"specversion":"1.0","id":"` + id + `","source":"test","type":"blob.stored","subject":"g","data":{"blob":"abc"}}`
		key := fmt.Sprintf("not-utf8-%d", i)
		if _, err := s.s3.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key),
			Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
		ptr := claimcheck.Pointer{Bucket: s.bucket, Key: key}
		if _, err := s.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(s.queue),
			MessageBody: aws.String(ptr.Body()), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(key),
			MessageAttributes: map[string]sqstypes.MessageAttributeValue{claimcheck.SizeAttribute: {DataType: aws.String("Number"),
				StringValue: aws.String(claimcheck.SizeAttributeValue(len(body)))}}}); err != nil {
			t.Fatal(err)
		}
	}
	var msgs []sqstypes.Message
	for len(msgs) < 2 { // the emulator hands out one message of a group at a time
		got := testkit.Drain(t, s.sqs, s.queue)
		if len(got) == 0 {
			t.Fatalf("queue held %d messages; want 2", len(msgs))
		}
		msgs = append(msgs, got...)
	}
	resp, err := s.consumer.Handle(context.Background(), sqsbatch.EventOf(msgs, "arn:aws:sqs:us-east-1:000000000000:large.fifo"))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle = %+v, %v; want both messages dead-lettered and acknowledged", resp, err)
	}
	if got := s.applier.take(); fmt.Sprint(got) != "[:malformed :malformed]" {
		t.Errorf("outcomes %v; want both malformed, before an event id is read: neither applied, nor a duplicate", got)
	}
	if n := s.total(t); n != 0 {
		t.Errorf("total %d; want 0", n)
	}
	dead := testkit.Drain(t, s.sqs, s.dlq)
	if len(dead) != 2 {
		t.Fatalf("dead-letter queue holds %d messages; want both", len(dead))
	}
	for _, m := range dead {
		if reason := aws.ToString(m.MessageAttributes[deadletter.AttrReason].StringValue); !strings.Contains(reason, "UTF-8") {
			t.Errorf("reason %q; want it to say the body is not UTF-8", reason)
		}
	}
}
