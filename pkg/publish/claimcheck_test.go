package publish_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// Past the threshold a message goes through S3: the object first, then the pointer with its
// ExtendedPayloadSize; under it, the body is sent as it is.
func TestPublisher_sends_a_message_past_the_threshold_as_a_pointer(t *testing.T) {
	t.Parallel()
	s3c, client := testkit.S3Client(t), testkit.SQS(t)
	bucket := testkit.Bucket(t, s3c, "publish")
	w, err := claimcheck.NewWriter(s3c, claimcheck.WriterConfig{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	p, err := publish.New(client, publish.Config{ClaimCheck: w, Threshold: 1000})
	if err != nil {
		t.Fatal(err)
	}
	url := testkit.CreateFIFOQueue(t, client, "publish-claim")
	big, small := strings.Repeat("B", 2000), strings.Repeat("s", 500)
	for i, err := range p.SendBatch(context.Background(), url, []publish.Message{
		{DedupID: "big", GroupID: "a", Body: big}, {DedupID: "small", GroupID: "b", Body: small}}) {
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	r, err := claimcheck.NewReader(s3c, claimcheck.ReaderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range sqsbatch.EventOf(testkit.Drain(t, client, url), "arn:aws:sqs:us-east-1:000000000000:q.fifo").Records {
		_, size, isPointer, _ := claimcheck.Parse(m)
		payload, err := r.Payload(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		if isPointer != (payload == big) || isPointer && size != int64(len(big)) {
			t.Fatalf("message of %d bytes: pointer %v (size %d); want only the one past the threshold a pointer, with its size", len(payload), isPointer, size)
		}
		got[m.Attributes["MessageDeduplicationId"]] = payload
	}
	if got["big"] != big || got["small"] != small {
		t.Fatalf("payloads read back: big %d bytes, small %d bytes; want 2000 and 500", len(got["big"]), len(got["small"]))
	}
}

// A body that could not be stored is not sent, and nothing after it is either (it would
// overtake it in its group).
func TestPublisher_stops_at_a_payload_it_could_not_store(t *testing.T) {
	t.Parallel()
	s3c, client := testkit.S3Client(t), testkit.SQS(t)
	w, err := claimcheck.NewWriter(s3c, claimcheck.WriterConfig{Bucket: "no-such-bucket-" + strings.ToLower(testkit.Name("x"))})
	if err != nil {
		t.Fatal(err)
	}
	p, err := publish.New(client, publish.Config{ClaimCheck: w, Threshold: 100, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	url := testkit.CreateFIFOQueue(t, client, "publish-claim")
	errs := p.SendBatch(context.Background(), url, []publish.Message{{DedupID: "1", GroupID: "g", Body: "small"},
		{DedupID: "2", GroupID: "g", Body: strings.Repeat("B", 200)}, {DedupID: "3", GroupID: "g", Body: "small"}})
	if errs[0] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "claim check") || !errors.Is(errs[2], publish.ErrNotSent) {
		t.Fatalf("errors %v; want the first sent, the second's claim check failed, the third not sent", errs)
	}
	if msgs := testkit.Drain(t, client, url); len(msgs) != 1 || aws.ToString(msgs[0].Body) != "small" {
		t.Fatalf("queue holds %d messages; want only the first", len(msgs))
	}
}

func TestNew_refuses_a_threshold_without_a_claim_check_or_past_SQSs_limit(t *testing.T) {
	client := testkit.SQS(t)
	w, err := claimcheck.NewWriter(testkit.S3Client(t), claimcheck.WriterConfig{Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []publish.Config{{Threshold: 1000}, {ClaimCheck: w, Threshold: publish.MaxMessageBytes + 1}, {ClaimCheck: w, Threshold: -1}} {
		if _, err := publish.New(client, cfg); err == nil || !strings.Contains(err.Error(), "Threshold") {
			t.Errorf("New(Threshold %d, claim check %v) = %v; want an error about Threshold", cfg.Threshold, cfg.ClaimCheck != nil, err)
		}
	}
}
