package idempotency_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// TestPipeline_every_outcome_through_the_batch_processor runs one FIFO batch holding every
// outcome through the batch processor, the engine, DynamoDB Local and a dead-letter queue on
// fauxqs, as a Lambda invocation would.
func TestPipeline_every_outcome_through_the_batch_processor(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	sq := testkit.SQS(t)
	dlq, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(testkit.Name("dlq") + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	var logs, emf bytes.Buffer
	logger := slog.New(requestIDs{slog.NewJSONHandler(&logs, nil)})
	rec := metrics.NewEMF(&emf, "onceflow", map[string]string{"Consumer": "capped"})
	c := f.Consumer(t, "capped", func(cfg *idempotency.Config) { cfg.Logger, cfg.Metrics = logger, rec })
	p, err := sqsbatch.NewFor(c.Engine(), sqsbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(sq, *dlq.QueueUrl)}})
	if err != nil {
		t.Fatal(err)
	}

	id := applytest.Unique(t)
	in := func(msgID, group string, m events.SQSMessage) events.SQSMessage {
		m.MessageId, m.Attributes["MessageGroupId"] = msgID, group
		return m
	}
	applied := applytest.Message(t, "", id+"-1", "test.capped", applytest.Counted{Counter: id, By: 8})
	batchEvent := events.SQSEvent{Records: []events.SQSMessage{
		in("a1", "g1", applied),
		in("a2", "g1", applytest.Redelivered(applied, 2)), // duplicate
		in("a3", "g1", applytest.Message(t, "", id+"-2", "test.capped", applytest.Counted{Counter: id, By: 5})), // rejected: over the cap
		in("a4", "g1", applytest.Message(t, "", id+"-1", "test.capped", applytest.Counted{Counter: id, By: 1})), // conflict: same id, other data
		in("b1", "g2", applytest.SQSMessage("", `{"specversion":"1.0","source":"s","type":"test.capped"}`, 1)),  // malformed: no id
		in("b2", "g2", applytest.Message(t, "", id+"-3", "test.capped", applytest.Counted{Counter: id + "-other", By: 2})),
	}}
	for i := range batchEvent.Records {
		batchEvent.Records[i].EventSourceARN = "arn:aws:sqs:us-east-1:000000000000:source.fifo"
	}
	lc := &lambdacontext.LambdaContext{AwsRequestID: "req-1"}
	invocation, cancel := context.WithTimeout(lambdacontext.NewContext(ctx, lc), 30*time.Second)
	defer cancel()
	resp, err := p.Handle(invocation, batchEvent)
	if err != nil {
		t.Fatalf("Handle returned an error: %v", err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %+v, want none: every outcome here is final", resp.BatchItemFailures)
	}
	if got := f.Counter(t, id); got != 8 {
		t.Errorf("counter = %d, want 8 (applied once; duplicate, rejection and conflict change nothing)", got)
	}
	if got := f.Counter(t, id+"-other"); got != 2 {
		t.Errorf("other counter = %d, want 2", got)
	}

	// The conflict and the malformed message are in the dead-letter queue with their reasons.
	out, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: dlq.QueueUrl, MaxNumberOfMessages: 10,
		MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, m := range out.Messages {
		reasons[*m.MessageAttributes[deadletter.AttrSourceMessageID].StringValue] = *m.MessageAttributes[deadletter.AttrReason].StringValue
	}
	if !strings.Contains(reasons["a4"], "event id reused with another payload") {
		t.Errorf("conflict dead letter reason = %q", reasons["a4"])
	}
	if !strings.Contains(reasons["b1"], "id: missing") {
		t.Errorf("malformed dead letter reason = %q", reasons["b1"])
	}
	if len(reasons) != 2 {
		t.Errorf("dead letters = %v, want exactly a4 and b1", reasons)
	}

	// One log line per message outcome, with the request id; metrics as one EMF line.
	outcomes := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l struct{ MessageID, Outcome, RequestID, Consumer string }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if l.Outcome == "" {
			continue
		}
		if l.RequestID != "req-1" || l.Consumer != "capped" {
			t.Errorf("log line lacks request id or consumer: %s", line)
		}
		if prev, dup := outcomes[l.MessageID]; dup {
			t.Errorf("message %s logged twice (%s, %s)", l.MessageID, prev, l.Outcome)
		}
		outcomes[l.MessageID] = l.Outcome
	}
	want := map[string]string{"a1": "applied", "a2": "duplicate", "a3": "rejected", "a4": "conflict", "b1": "malformed", "b2": "applied"}
	for k, v := range want {
		if outcomes[k] != v {
			t.Errorf("logged outcomes = %v, want %v", outcomes, want)
			break
		}
	}
	var m map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(emf.Bytes()), &m); err != nil {
		t.Fatalf("metrics are not one EMF line: %q", emf.String())
	}
	for name, n := range map[string]float64{metrics.Applied: 2, metrics.Duplicate: 1, metrics.Rejected: 1,
		metrics.Conflict: 1, metrics.Malformed: 1, metrics.DeadLettered: 2} {
		if m[name] != n {
			t.Errorf("metric %s = %v, want %v (EMF: %s)", name, m[name], n, emf.String())
		}
	}
}

// requestIDs adds the Lambda request id of the context to every record, to show that the
// engine logs with the invocation's context.
type requestIDs struct{ slog.Handler }

func (h requestIDs) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		r.AddAttrs(slog.String("requestId", lc.AwsRequestID))
	}
	return h.Handler.Handle(ctx, r)
}
