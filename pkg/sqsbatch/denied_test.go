package sqsbatch_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// deniedStack is the ledger-like consumer of redrive under HoldGroup whose DynamoDB, SQS (its
// dead-letter queue in fauxqs) and S3 (claim checks in fauxqs) are reached through proxies of
// its own that answer chosen calls as AWS answers a role that lacks the permission: tests and
// cases on stacks of their own run in parallel.
type deniedStack struct {
	r       *redrive
	records string
	ddb     *fault.DenyProxy
	sqs     *fault.DenyProxy
	s3      *fault.DenyProxy
	direct  *sqs.Client
	dlq     string
	bucket  string
	logs    *testenv.Logs
	emf     *testenv.EMF
	p       *sqsbatch.Processor
}

func newDeniedStack(t *testing.T, maxReceiveCount int) *deniedStack {
	t.Helper()
	s := &deniedStack{r: newRedrive(t), direct: testkit.SQS(t)}
	s.records = testkit.Table(t, s.r.db, "idem", "pk")
	db, ddb := fault.DynamoDBDenying(t)
	sqsc, sqsDeny := fault.SQSDenying(t)
	s3c, s3Deny := fault.S3Denying(t)
	s.ddb, s.sqs, s.s3 = ddb, sqsDeny, s3Deny
	s.dlq = testkit.CreateFIFOQueue(t, s.direct, "denied-dlq")
	s.bucket = testkit.Bucket(t, testkit.S3Client(t), "denied")
	reader, err := claimcheck.NewReader(s3c, claimcheck.ReaderConfig{Buckets: []string{s.bucket}})
	if err != nil {
		t.Fatal(err)
	}
	logger, logs := testenv.NewLogs()
	recorder, emf := testenv.NewEMF(map[string]string{"Consumer": "ledger"})
	s.logs, s.emf = logs, emf
	s.p, err = sqsbatch.NewConsumer(db, s.r, idempotency.Config{Name: "ledger", Table: s.records, Logger: logger, Metrics: recorder,
		AfterDeadLetter: idempotency.HoldGroup, CacheSize: -1},
		sqsbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(sqsc, s.dlq)}, Payloads: reader, MaxReceiveCount: maxReceiveCount})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// run hands one batch of q to the processor and settles it as Lambda would; it returns the
// messages reported failed.
func (s *deniedStack) run(t *testing.T, q *fifoQueue) []string {
	t.Helper()
	ev := q.receive()
	resp := handle(t, s.p, t.Context(), ev)
	q.settle(ev, resp)
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

// letters returns the messages in the dead-letter queue (visible and in flight).
func (s *deniedStack) letters(t *testing.T) int { return testenv.QueueDepth(t, s.direct, s.dlq) }

// checkDenied checks that the denial was logged at ERROR naming the permission, and counted.
func (s *deniedStack) checkDenied(t *testing.T, permission, code string) {
	t.Helper()
	testenv.CheckDenied(t, s.logs, s.emf, permission, code)
}

// checkClean checks that nothing was counted against the messages, held or dead-lettered.
func (s *deniedStack) checkClean(t *testing.T, events ...string) {
	t.Helper()
	s.checkUncounted(t, events...)
	admin := operator.New(s.r.db, s.records)
	for _, id := range events {
		group, _, _ := strings.Cut(id, "/")
		if h, ok, err := admin.Hold(t.Context(), "ledger", group); err != nil || ok {
			t.Errorf("group %s held: %+v, %v, %v; want it not held for a denial", group, h, ok, err)
		}
	}
}

// checkUncounted checks that nothing was counted against the messages or dead-lettered.
func (s *deniedStack) checkUncounted(t *testing.T, events ...string) {
	t.Helper()
	admin := operator.New(s.r.db, s.records)
	for _, id := range events {
		if at, ok, err := admin.Attempts(t.Context(), "ledger", s.r.eventID(t, id)); err != nil || ok {
			t.Errorf("failed attempts of %s: %+v, %v, %v; want none counted: a denial is not the message's failure", id, at, ok, err)
		}
	}
	if n := s.letters(t); n != 0 {
		t.Errorf("%d dead letters; want none for a denial", n)
	}
}

// checkHeldBehind checks that group a is held behind a/1.
func (s *deniedStack) checkHeldBehind(t *testing.T) {
	t.Helper()
	if h, ok, err := operator.New(s.r.db, s.records).Hold(t.Context(), "ledger", "a"); err != nil || !ok || h.Held[0].MessageID != "a/1" {
		t.Errorf("group a's hold %+v, %v, %v; want it held behind a/1", h, ok, err)
	}
}

// A commit IAM denies (the ledger's role without dynamodb:ConditionCheckItem on its holds, as
// the issue found the template) is the deployment's fault: every message is left for
// redelivery, uncounted, undead-lettered, its group not held, the denial logged at ERROR naming
// the permission and counted; once the permission is granted the next delivery applies each
// once, and nothing is left held.
func TestProcessor_a_denied_commit_leaves_the_messages_for_redelivery_until_granted(t *testing.T) {
	s := newDeniedStack(t, 0)
	s.ddb.Set(fault.Deny{Action: "dynamodb:ConditionCheckItem", Prefix: "#hold#ledger#"})
	q := newFIFOQueue(t, 50, "a/1", "a/2", "b/1")
	for range port.DefaultMaxAttempts + 2 { // more deliveries than MaxAttempts: still not dead-lettered
		if failed := s.run(t, q); !slices.Contains(failed, "a/1") || !slices.Contains(failed, "b/1") {
			t.Fatalf("failed %v; want a/1 and b/1 left for redelivery", failed)
		}
	}
	s.checkDenied(t, "dynamodb:ConditionCheckItem", "AccessDeniedException")
	s.checkClean(t, "a/1", "a/2", "b/1")
	if got := s.r.applied(t, "a"); len(got) != 0 {
		t.Fatalf("applied %v while denied", got)
	}

	s.ddb.Set() // granted
	q.drain(t, s.p)
	if got := s.r.applied(t, "a"); !slices.Equal(got, []string{s.r.eventID(t, "a/1"), s.r.eventID(t, "a/2")}) {
		t.Errorf("group a applied %v; want a/1, a/2 once each, in order", got)
	}
	if got := s.r.applied(t, "b"); len(got) != 1 {
		t.Errorf("group b applied %v; want b/1 once", got)
	}
	s.checkClean(t, "a/1", "b/1")
}

// The other calls of the failure path, each denied in turn: counting a failed attempt, writing
// the hold before a dead letter, the dead-letter send (in both codes SQS's JSON protocol gives,
// with and without its query-compatible header), and a claim check's read. Each leaves the
// message for redelivery, uncounted and undead-lettered, logs the permission and counts it;
// granted, the message goes where it would have gone. No denial holds a group: a message
// whose send to the dead-letter queue is denied was held for its own reason (malformed) before
// the send, and that hold stays, so the group is protected should the queue move it.
func TestProcessor_each_denied_call_of_the_failure_path_leaves_the_message_for_redelivery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		deny       fault.Deny
		on         func(*deniedStack) *fault.DenyProxy
		permission string
		code       string
		message    func(t *testing.T, s *deniedStack, q *fifoQueue) // sends a/1
		held       bool                                             // a/1's group held for its own reason while denied
		granted    func(t *testing.T, s *deniedStack)               // where a/1 went once granted
	}{
		{name: "count", deny: fault.Deny{Action: "dynamodb:UpdateItem", Prefix: "#attempts#ledger#"},
			on: func(s *deniedStack) *fault.DenyProxy { return s.ddb }, permission: "dynamodb:UpdateItem", code: "AccessDeniedException",
			message: func(t *testing.T, s *deniedStack, q *fifoQueue) {
				s.r.failing[s.r.eventID(t, "a/1")] = true
				q.send(t, "a/1")
			},
			granted: func(t *testing.T, s *deniedStack) {
				if got := s.r.applied(t, "a"); len(got) != 1 {
					t.Errorf("applied %v; want a/1 once", got)
				}
			}},
		{name: "hold write", deny: fault.Deny{Action: "dynamodb:PutItem", Prefix: "#hold#ledger#"},
			on: func(s *deniedStack) *fault.DenyProxy { return s.ddb }, permission: "dynamodb:PutItem", code: "AccessDeniedException",
			message: sendMalformed, granted: malformedDeadLettered},
		{name: "dead-letter send, query-compatible code", deny: fault.Deny{Action: "sqs:SendMessage", QueryError: true},
			on: func(s *deniedStack) *fault.DenyProxy { return s.sqs }, permission: "sqs:sendmessage", code: "AccessDenied",
			message: sendMalformed, held: true, granted: malformedDeadLettered},
		{name: "dead-letter send, JSON code", deny: fault.Deny{Action: "sqs:SendMessage"},
			on: func(s *deniedStack) *fault.DenyProxy { return s.sqs }, permission: "sqs:sendmessage", code: "AccessDeniedException",
			message: sendMalformed, held: true, granted: malformedDeadLettered},
		{name: "claim-check read", deny: fault.Deny{Action: "s3:GetObject"},
			on: func(s *deniedStack) *fault.DenyProxy { return s.s3 }, permission: "s3:GetObject", code: "AccessDenied",
			message: sendPointer, granted: func(t *testing.T, s *deniedStack) {
				if got := s.r.applied(t, "a"); len(got) != 1 {
					t.Errorf("applied %v; want a/1, read from its claim check, once", got)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newDeniedStack(t, 0)
			proxy := tt.on(s)
			proxy.Set(tt.deny)
			q := newFIFOQueue(t, 50)
			tt.message(t, s, q)
			for range port.DefaultMaxAttempts + 2 {
				if failed := s.run(t, q); !slices.Equal(failed, []string{"a/1"}) {
					t.Fatalf("failed %v; want a/1 left for redelivery", failed)
				}
			}
			if proxy.Denied(tt.deny.Action) == 0 {
				t.Fatalf("the proxy denied no %s", tt.deny.Action)
			}
			s.checkDenied(t, tt.permission, tt.code)
			if tt.held {
				s.checkUncounted(t, "a/1")
				s.checkHeldBehind(t)
			} else {
				s.checkClean(t, "a/1")
			}

			proxy.Set() // granted
			s.r.heal()  // and the downstream that failed the count case's handler back
			q.drain(t, s.p)
			tt.granted(t, s)
		})
	}
}

// A role that may not read or write the note of a dead letter (GetItem or PutItem under its
// holds' keys) is reported as every denial is, and the letter is sent all the same: the note only
// spares a second letter of a message delivered again.
func TestProcessor_a_denied_note_of_a_dead_letter_is_reported_and_the_letter_sent(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"dynamodb:GetItem", "dynamodb:PutItem"} {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			s := newDeniedStack(t, 0)
			deny := fault.Deny{Action: action, Prefix: table.LetterKey("ledger", "a", "")}
			s.ddb.Set(deny)
			q := newFIFOQueue(t, 50)
			sendMalformed(t, s, q)
			if failed := s.run(t, q); len(failed) != 0 {
				t.Fatalf("failed %v; want a/1 dead-lettered and acknowledged", failed)
			}
			if s.ddb.Denied(action) == 0 {
				t.Fatalf("the proxy denied no %s", action)
			}
			s.checkDenied(t, action, "AccessDeniedException")
			malformedDeadLettered(t, s)
		})
	}
}

// sendMalformed sends a/1 as a body that is no CloudEvent.
func sendMalformed(t *testing.T, _ *deniedStack, q *fifoQueue) {
	q.msgs = append(q.msgs, events.SQSMessage{MessageId: "a/1", Body: "not json", EventSource: "aws:sqs", EventSourceARN: fifoARN,
		Attributes: map[string]string{"MessageGroupId": "a"}})
}

// malformedDeadLettered checks that a/1, malformed, went to the dead-letter queue once its
// calls were granted, its group held behind it (the runbook's malformed path takes it from
// there).
func malformedDeadLettered(t *testing.T, s *deniedStack) {
	t.Helper()
	if n := s.letters(t); n != 1 {
		t.Errorf("%d dead letters; want a/1, malformed", n)
	}
	s.checkHeldBehind(t)
}

// sendPointer sends a/1 as a claim check whose payload is an object in the bucket.
func sendPointer(t *testing.T, s *deniedStack, q *fifoQueue) {
	q.send(t, "a/1")
	m := &q.msgs[len(q.msgs)-1]
	key := "payload-" + testkit.Name("a")
	if _, err := testkit.S3Client(t).PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key),
		Body: strings.NewReader(m.Body)}); err != nil {
		t.Fatal(err)
	}
	m.MessageAttributes = map[string]events.SQSMessageAttribute{claimcheck.SizeAttribute: {DataType: "Number", StringValue: aws.String(fmt.Sprint(len(m.Body)))}}
	m.Body = fmt.Sprintf(`["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":%q,"s3Key":%q}]`, s.bucket, key)
}

// SQS's own backstop is not the engine's to suspend: a message whose commit is denied on every
// delivery is moved by the queue after maxReceiveCount receives, holding its group (the
// backstop hold, written on its last receives, is a write the role may make), as for any other
// cause. Once the permission is granted, the letter redriven under a new id is applied and
// releases the group: nothing is left held.
func TestProcessor_a_message_denied_until_the_queue_moves_it_holds_its_group_until_redriven(t *testing.T) {
	const maxReceiveCount = 4
	s := newDeniedStack(t, maxReceiveCount)
	s.ddb.Set(fault.Deny{Action: "dynamodb:UpdateItem", Prefix: "LOG#"}) // the effect's write
	q := newFIFOQueue(t, maxReceiveCount, "a/1")
	for range 2 * maxReceiveCount {
		if len(q.msgs) == 0 {
			break
		}
		s.run(t, q)
	}
	if !slices.Equal(q.redriven, []string{"a/1"}) {
		t.Fatalf("the queue moved %v; want a/1, denied on every delivery", q.redriven)
	}
	admin := operator.New(s.r.db, s.records)
	if h, ok, err := admin.Hold(t.Context(), "ledger", "a"); err != nil || !ok || h.Held[0].MessageID != "a/1" {
		t.Fatalf("group a's hold %+v, %v, %v; want it held behind a/1, which the queue moved", h, ok, err)
	}
	if at, ok, _ := admin.Attempts(t.Context(), "ledger", s.r.eventID(t, "a/1")); ok {
		t.Errorf("failed attempts %+v; want none counted for a denial", at)
	}
	s.checkDenied(t, "dynamodb:UpdateItem", "AccessDeniedException")

	s.ddb.Set() // granted, then the letter redriven under a new message id
	q.send(t, "a/1@redriven-a-1")
	q.send(t, "a/2")
	q.drain(t, s.p)
	if got := s.r.applied(t, "a"); !slices.Equal(got, []string{s.r.eventID(t, "a/1"), s.r.eventID(t, "a/2")}) {
		t.Errorf("group a applied %v; want a/1 then a/2", got)
	}
	if h, ok, err := admin.Hold(t.Context(), "ledger", "a"); err != nil || ok {
		t.Errorf("group a still held: %+v, %v, %v; want nothing held once the letter was applied", h, ok, err)
	}
}

// The backstop hold, written before the batch on a message's last receives, denied: the
// denial is logged and counted as any other, and the batch is handled as usual (the message
// may succeed; refusing it would let the queue move it unheld).
func TestProcessor_a_denied_backstop_hold_is_reported_and_the_batch_handled(t *testing.T) {
	const maxReceiveCount = 4
	s := newDeniedStack(t, maxReceiveCount)
	s.ddb.Set(fault.Deny{Action: "dynamodb:PutItem", Prefix: "#hold#ledger#"})
	q := newFIFOQueue(t, maxReceiveCount, "a/1")
	for range maxReceiveCount - batch.BackstopReceives { // lost answers: received again unsettled
		q.receive()
	}
	if failed := s.run(t, q); len(failed) != 0 {
		t.Fatalf("failed %v; want a/1 applied on its last receives although its backstop hold was denied", failed)
	}
	lines := testenv.CheckDenied(t, s.logs, s.emf, "dynamodb:PutItem", "AccessDeniedException")
	if len(lines) != 1 || !strings.Contains(fmt.Sprint(lines[0]["during"]), "before its messages' last receives") {
		t.Errorf("denials %v; want the backstop hold's, once", lines)
	}
	if got := s.r.applied(t, "a"); len(got) != 1 {
		t.Errorf("applied %v; want a/1 once", got)
	}
	s.checkClean(t, "a/1")
}
