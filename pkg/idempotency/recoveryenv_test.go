package idempotency_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// recovery is the recovery path between real components: a FIFO source queue and its
// dead-letter queue in the SQS emulator, a HoldGroup consumer over DynamoDB Local whose effect
// appends each applied event's id to its group's log (in commit order), and a poller that
// plays Lambda's event source mapping. Events named in failing fail (transiently) until
// healed; events named in malformed are malformed for good. Each test makes its own (its
// tables and queues named by testkit.Name), so that the tests run in parallel.
type recovery struct {
	db        *dynamodb.Client
	sqs       *sqs.Client
	app, idem string
	src, dlq  string
	srcARN    string
	consumer  string
	proc      *sqsbatch.Processor
	admin     *operator.Admin

	mu        sync.Mutex
	failing   map[string]bool
	malformed map[string]bool
}

func newRecovery(t *testing.T) *recovery {
	t.Helper()
	r := &recovery{db: testkit.DynamoDB(t), sqs: testkit.SQS(t), consumer: "ledger",
		failing: map[string]bool{}, malformed: map[string]bool{}}
	r.app = testkit.Table(t, r.db, "app", "pk")
	r.idem = testkit.Table(t, r.db, "idem", "pk")
	r.src, r.srcARN = r.queue(t, "src")
	r.dlq, _ = r.queue(t, "dlq")
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	p, err := sqsbatch.NewConsumer(r.db, idempotency.HandlerFunc(r.decide),
		idempotency.Config{Name: r.consumer, Table: r.idem, Logger: quiet, AfterDeadLetter: idempotency.HoldGroup, CacheSize: -1},
		sqsbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(r.sqs, r.dlq), MaxAttempts: 2}})
	if err != nil {
		t.Fatal(err)
	}
	r.proc = p
	r.admin = operator.New(r.db, r.idem)
	return r
}

func (r *recovery) queue(t *testing.T, prefix string) (url, arn string) {
	t.Helper()
	out, err := r.sqs.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(testkit.Name(prefix) + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "VisibilityTimeout": "30"}})
	if err != nil {
		t.Fatal(err)
	}
	url = aws.ToString(out.QueueUrl)
	t.Cleanup(func() {
		_, _ = r.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	})
	attrs, err := r.sqs.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return url, attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

func (r *recovery) decide(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.malformed[ev.ID] {
		return nil, cloudevent.Malformed("data.amount", "not a number")
	}
	if r.failing[ev.ID] {
		return nil, fmt.Errorf("downstream unavailable for %s", ev.ID)
	}
	add := expression.Set(expression.Name("ids"), expression.ListAppend(
		expression.IfNotExists(expression.Name("ids"), expression.Value([]string{})), expression.Value([]string{ev.ID})))
	return idempotency.Effect{idempotency.Update(r.app, map[string]string{"pk": "LOG#" + ev.Subject}, add)}, nil
}

func (r *recovery) fail(ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		r.failing[id] = true
	}
}

func (r *recovery) poison(ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		r.malformed[id] = true
	}
}

func (r *recovery) heal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.failing)
}

// send sends event id of group to the source queue, as a producer does: deduplicated by the
// event id.
func (r *recovery) send(t *testing.T, group string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		r.sendAs(t, group, id, id, map[string]string{})
	}
}

// sendAs sends event id of group with data, deduplicated by dedup.
func (r *recovery) sendAs(t *testing.T, group, id, dedup string, data any) {
	t.Helper()
	ev, err := cloudevent.New(id, "test", "test.logged", group, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), data)
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.sqs.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(r.src), MessageBody: aws.String(string(body)),
		MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(dedup)}); err != nil {
		t.Fatal(err)
	}
}

// discard follows the runbook's discard of the letter of event id, as onceflow dlq discard
// does: it takes the letter out of view, records the decision, deletes the letter.
func (r *recovery) discard(t *testing.T, id string) operator.Record {
	t.Helper()
	l, ok, err := dlq.Take(t.Context(), r.sqs, r.dlq, id)
	if err != nil || !ok {
		t.Fatalf("letter %s: %v, %v; want it in view", id, ok, err)
	}
	rec, err := r.admin.Discard(t.Context(), operator.Discard{Consumer: r.consumer, EventID: l.EventID, MessageID: l.SourceMessage,
		Group: l.GroupID, Body: l.Body, By: "test", Why: "producer bug"})
	if err != nil {
		dlq.Release(t.Context(), r.sqs, r.dlq, l)
		t.Fatalf("discard %s: %v", id, err)
	}
	if err := dlq.Delete(t.Context(), r.sqs, r.dlq, l); err != nil {
		t.Fatal(err)
	}
	return rec
}

// consume plays the event source mapping until the source queue is empty: it receives
// batches, hands them to the consumer, deletes what it acknowledged and makes the failures
// visible again at once (a short visibility timeout).
func (r *recovery) consume(t *testing.T) {
	t.Helper()
	for range 200 {
		out, err := r.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(r.src), MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			if r.count(t, r.src) == 0 {
				return
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		var ev events.SQSEvent
		handles := map[string]string{}
		for _, m := range out.Messages {
			id := aws.ToString(m.MessageId)
			handles[id] = aws.ToString(m.ReceiptHandle)
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: id, ReceiptHandle: handles[id], Body: aws.ToString(m.Body),
				Attributes: m.Attributes, EventSource: "aws:sqs", EventSourceARN: r.srcARN})
		}
		resp, err := r.proc.Handle(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for id, h := range handles {
			if failed[id] {
				_, err = r.sqs.ChangeMessageVisibility(t.Context(), &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(r.src),
					ReceiptHandle: aws.String(h), VisibilityTimeout: 0})
			} else {
				_, err = r.sqs.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(r.src), ReceiptHandle: aws.String(h)})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatalf("source queue not drained: %d messages left", r.count(t, r.src))
}

// count is how many messages the queue holds, visible or not.
func (r *recovery) count(t *testing.T, url string) int {
	t.Helper()
	out, err := r.sqs.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range out.Attributes {
		k, _ := strconv.Atoi(v)
		n += k
	}
	return n
}

// redrive redrives the dead-letter queue back to the source queue with cfg, calling between
// (if not nil) after each letter it moved, and returns the outcomes by event id.
func (r *recovery) redrive(t *testing.T, cfg dlq.RedriveConfig, between func(dlq.Redriven)) map[string][]dlq.Outcome {
	t.Helper()
	cfg.Client, cfg.Queue = r.sqs, r.dlq
	got := map[string][]dlq.Outcome{}
	err := dlq.Redrive(t.Context(), cfg, func(d dlq.Redriven) {
		got[d.Letter.EventID] = append(got[d.Letter.EventID], d.Outcome)
		if d.Err != nil {
			t.Logf("redrive %s: %s: %v", d.Letter.EventID, d.Outcome, d.Err)
		}
		if between != nil && d.Outcome == dlq.Moved {
			between(d)
		}
	})
	if err != nil {
		t.Fatalf("Redrive: %v", err)
	}
	return got
}

// applied reads the group's log: the events applied, in commit order.
func (r *recovery) applied(t *testing.T, group string) []string {
	t.Helper()
	out, err := r.db.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(r.app),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "LOG#" + group}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ IDs []string }
	if err := attributevalue.UnmarshalMap(out.Item, &v); err != nil {
		t.Fatal(err)
	}
	return v.IDs
}

func (r *recovery) wantApplied(t *testing.T, group string, want ...string) {
	t.Helper()
	if got := r.applied(t, group); !slices.Equal(got, want) {
		t.Errorf("group %s applied %v; want %v", group, got, want)
	}
}

// letters is how many letters the dead-letter queue holds.
func (r *recovery) letters(t *testing.T) int { return r.count(t, r.dlq) }
