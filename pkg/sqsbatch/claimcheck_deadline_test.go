package sqsbatch_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// S3 is slow (each round trip 3 s) when a claim check's payload is read, the message started
// with DeadlineMargin left: the batch must still answer before the invocation's deadline.
func TestClaimCheck_a_slow_read_answers_within_the_deadline(t *testing.T) {
	plain := testkit.S3Client(t)
	bucket := testkit.Bucket(t, plain, "payloads")
	if _, err := plain.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k1"),
		Body: strings.NewReader(`{"specversion":"1.0","id":"e1","source":"t","type":"test.logged","subject":"a","data":{}}`)}); err != nil {
		t.Fatal(err)
	}
	slow := testkit.S3Client(t, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(fault.LatencyProxy(t, testkit.Emulator(t, testkit.SQSEndpointVariable), 3*time.Second))
	})
	reader, err := claimcheck.NewReader(slow, claimcheck.ReaderConfig{Buckets: []string{bucket}})
	if err != nil {
		t.Fatal(err)
	}
	r := newRedrive(t)
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	p, err := sqsbatch.NewConsumer(r.db, r, idempotency.Config{Name: "ledger", Table: testkit.Table(t, r.db, "idem", "pk"), Logger: quiet},
		sqsbatch.Config{Options: batch.Options{DeadLetter: r}, Payloads: reader})
	if err != nil {
		t.Fatal(err)
	}
	ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-1", Body: claimcheck.Pointer{Bucket: bucket, Key: "k1"}.Body(),
		EventSourceARN: fifoARN, Attributes: map[string]string{"MessageGroupId": "a", "ApproximateReceiveCount": "1"}}}}
	deadline := time.Now().Add(batch.DefaultDeadlineMargin + 100*time.Millisecond)
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	resp := handle(t, p, ctx, ev)
	if left := time.Until(deadline); left < 0 {
		t.Errorf("the batch answered %s after the invocation's deadline (Lambda would have timed it out)", -left)
	}
	t.Logf("failures %v", resp.BatchItemFailures)
}
