package sqsbatch_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// SQS is slow (each round trip 3 s) when a malformed message, started with DeadlineMargin
// left, is dead-lettered: the batch must still answer before the invocation's deadline, or
// Lambda times it out and every message of the batch comes back.
func TestDeadLetter_a_slow_send_answers_within_the_deadline(t *testing.T) {
	plain := testkit.SQS(t)
	out, err := plain.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(testkit.Name("dlq") + ".fifo"),
		Attributes: map[string]string{string(sqstypes.QueueAttributeNameFifoQueue): "true"}})
	if err != nil {
		t.Fatal(err)
	}
	slow := testkit.SQS(t, func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(fault.LatencyProxy(t, testkit.Emulator(t, testkit.SQSEndpointVariable), 3*time.Second))
	})
	r := newRedrive(t)
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	p, err := sqsbatch.NewConsumer(r.db, r, idempotency.Config{Name: "ledger", Table: testkit.Table(t, r.db, "idem", "pk"), Logger: quiet},
		sqsbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(slow, aws.ToString(out.QueueUrl))}})
	if err != nil {
		t.Fatal(err)
	}
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m-bad", Body: "not json", EventSourceARN: fifoARN, Attributes: map[string]string{"MessageGroupId": "a", "ApproximateReceiveCount": "1"}},
	}}
	deadline := time.Now().Add(batch.DefaultDeadlineMargin + 100*time.Millisecond)
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	resp := handle(t, p, ctx, ev)
	if left := time.Until(deadline); left < 0 {
		t.Errorf("the batch answered %s after the invocation's deadline (Lambda would have timed it out)", -left)
	}
	t.Logf("failures %v", resp.BatchItemFailures)
}
