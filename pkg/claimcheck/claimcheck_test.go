package claimcheck_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/testkit"
)

func TestWriter_and_Reader_carry_3_MiB_through_the_emulators_S3(t *testing.T) {
	t.Parallel()
	client := testkit.S3Client(t)
	bucket := testkit.Bucket(t, client, "claimcheck")
	w, err := claimcheck.NewWriter(client, claimcheck.WriterConfig{Bucket: bucket, KeyPrefix: "payloads/"})
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.Repeat("0123456789abcdef", 3<<20/16)
	p, err := w.Offload(context.Background(), payload)
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.Offload(context.Background(), payload)
	if err != nil || again != p || p.Bucket != bucket || !strings.HasPrefix(p.Key, "payloads/") {
		t.Fatalf("Offload = %+v then %+v (%v); want one object under the prefix, named by the payload", p, again, err)
	}
	r, err := claimcheck.NewReader(client, claimcheck.ReaderConfig{Buckets: []string{bucket}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Payload(context.Background(), events.SQSMessage{Body: p.Body(), MessageAttributes: sized(claimcheck.SizeAttributeValue(len(payload)))})
	if err != nil || got != payload {
		t.Fatalf("Payload = %d bytes, %v; want the %d bytes written", len(got), err, len(payload))
	}
	plain := events.SQSMessage{Body: `{"specversion":"1.0"}`}
	if got, err := r.Payload(context.Background(), plain); err != nil || got != plain.Body {
		t.Fatalf("Payload of a plain message = %q, %v; want its body", got, err)
	}
}

func TestReader_refuses_permanently_what_it_can_never_read(t *testing.T) {
	t.Parallel()
	client := testkit.S3Client(t)
	bucket := testkit.Bucket(t, client, "claimcheck")
	big := strings.Repeat("x", 2000)
	if _, err := client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("big"),
		Body: strings.NewReader(big)}); err != nil {
		t.Fatal(err)
	}
	r, err := claimcheck.NewReader(client, claimcheck.ReaderConfig{MaxBytes: 1000, Buckets: []string{bucket}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		msg  events.SQSMessage
		says string
	}{
		{"a missing object", events.SQSMessage{Body: claimcheck.Pointer{Bucket: bucket, Key: "gone"}.Body(), MessageAttributes: sized("10")},
			"claim check s3://" + bucket + "/gone: no such object"},
		{"a size past the bound, as declared", events.SQSMessage{Body: claimcheck.Pointer{Bucket: bucket, Key: "big"}.Body(), MessageAttributes: sized("2000")},
			"2000 bytes, past the bound of 1000"},
		{"a size past the bound, undeclared", events.SQSMessage{Body: claimcheck.Pointer{Bucket: bucket, Key: "big"}.Body()},
			"2000 bytes, past the bound of 1000"},
		{"another bucket", events.SQSMessage{Body: claimcheck.Pointer{Bucket: "elsewhere", Key: "big"}.Body(), MessageAttributes: sized("10")},
			"s3://elsewhere/big: not in a bucket this consumer reads"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Payload(context.Background(), tc.msg)
			var oe *claimcheck.ObjectError
			if !errors.As(err, &oe) || !idempotency.IsPermanent(err) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Payload error = %v; want a permanent ObjectError saying %q", err, tc.says)
			}
		})
	}
}

func TestReader_retries_an_S3_it_cannot_reach(t *testing.T) {
	t.Parallel()
	client := s3.NewFromConfig(testkit.Config(), func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle, o.RetryMaxAttempts = aws.String("http://127.0.0.1:1"), true, 1
	})
	r, err := claimcheck.NewReader(client, claimcheck.ReaderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Payload(context.Background(), events.SQSMessage{Body: claimcheck.Pointer{Bucket: "b", Key: "k"}.Body(), MessageAttributes: sized("10")})
	if err == nil || idempotency.IsPermanent(err) {
		t.Fatalf("Payload error = %v; want a transient one: the message is retried", err)
	}
}
