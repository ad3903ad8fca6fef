package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
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

// pipeline is the ledger's path through the cloud's emulators, as the runbook's operator meets
// it: the LedgerQueue and LedgerDeadLetterQueue in fauxqs, the HoldGroup consumer "ledger"
// built by sqsbatch.NewFor (two own failures dead-letter a message, into the dead-letter queue
// through deadletter.Queue), whose effect appends each applied event's id to its
// account's log in the app table, in commit order, and a poller that plays Lambda's event
// source mapping. The events named in failing fail transiently, those in malformed are refused
// as malformed, and those in hanging run until the invocation's deadline: the function times
// out (Lambda kills it, nothing of its batch is answered), as a crash does.
type pipeline struct {
	c        *cloud
	p        *sqsbatch.Processor
	engine   *idempotency.Consumer // the same consumer, for a test that calls the engine itself
	admin    *operator.Admin
	src, dlq string
	srcARN   string

	mu        sync.Mutex
	failing   map[string]bool
	malformed map[string]bool
	hanging   map[string]bool
	lose      map[string]int // event id -> how many more answers of its batches are lost
	// mates: event id -> the event ahead of it in its group whose batches it shares on AWS (a
	// FIFO receive there returns several messages of a group; the local queue returns one at
	// a time): its invocations are killed, as that event's are, while that one hangs undecided.
	mates map[string]string
}

// pipelineConfig tunes a pipeline: MaxReceiveCount, when set, is the LedgerQueue's redrive
// policy (SQS moves a message to LedgerDeadLetterQueue after that many receives) and the
// processor's (its backstop holds a group on a message's last receives); DynamoDB adjusts the
// consumer's DynamoDB client (a test's middleware).
type pipelineConfig struct {
	MaxReceiveCount int
	DynamoDB        []func(*dynamodb.Options)
}

// fixedEventTime is the time of every event the tests send: a re-send of an event is the same
// payload.
var fixedEventTime = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// functionTimeout is how long an invocation that handles a hanging event runs before Lambda
// kills it.
const functionTimeout = 500 * time.Millisecond

func (c *cloud) pipeline(t *testing.T, cfg pipelineConfig) *pipeline {
	t.Helper()
	f := &pipeline{c: c, src: c.e.Queues["LedgerQueue"].URL, srcARN: c.e.Queues["LedgerQueue"].ARN,
		dlq: c.e.Queues["LedgerDeadLetterQueue"].URL, admin: operator.New(c.db, c.tableName("IdempotencyTable")),
		failing: map[string]bool{}, malformed: map[string]bool{}, hanging: map[string]bool{}, lose: map[string]int{},
		mates: map[string]string{}}
	if cfg.MaxReceiveCount > 0 {
		policy := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"%d"}`, c.e.Queues["LedgerDeadLetterQueue"].ARN, cfg.MaxReceiveCount)
		if _, err := c.sqs.SetQueueAttributes(t.Context(), &sqs.SetQueueAttributesInput{QueueUrl: aws.String(f.src),
			Attributes: map[string]string{"RedrivePolicy": policy}}); err != nil {
			t.Fatal(err)
		}
	}
	db := c.db
	if len(cfg.DynamoDB) > 0 {
		db = dynamodb.NewFromConfig(emulatorConfig, append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
			o.BaseEndpoint = aws.String(emulator(t, testkit.EndpointVariable))
		}}, cfg.DynamoDB...)...)
	}
	consumer := idempotency.Config{Name: "ledger", Table: c.tableName("IdempotencyTable"), AfterDeadLetter: idempotency.HoldGroup,
		CacheSize: -1, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)), Retry: idempotency.Retry{Margin: 50 * time.Millisecond}}
	engine, err := idempotency.New(db, f, consumer)
	if err != nil {
		t.Fatal(err)
	}
	f.engine = engine
	f.p, err = sqsbatch.NewFor(engine.Engine(), sqsbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(c.sqs, f.dlq), MaxAttempts: 2, DeadlineMargin: 10 * time.Millisecond},
		MaxReceiveCount: cfg.MaxReceiveCount})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sharesBatches says that id shares the batches of mate, ahead of it in its group (f.mates).
func (f *pipeline) sharesBatches(id, mate string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mates[id] = mate
}

// hangs reports whether event id runs until the invocation's deadline: it is in f.hanging, or
// its mate is, undecided.
func (f *pipeline) hangs(ctx context.Context, id string) (bool, error) {
	f.mu.Lock()
	mate, ok := f.mates[id]
	hang, mateHangs := f.hanging[id], ok && f.hanging[mate]
	f.mu.Unlock()
	if hang || !mateHangs {
		return hang, nil
	}
	_, decided, err := f.admin.Record(ctx, "ledger", mate)
	return !decided, err
}

// Decide is the ledger's handler: an append of the event's id to its account's log.
func (f *pipeline) Decide(ctx context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
	hang, err := f.hangs(ctx, ev.ID)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	bad, fail := f.malformed[ev.ID], f.failing[ev.ID]
	f.mu.Unlock()
	switch {
	case hang:
		<-ctx.Done()
		return nil, ctx.Err()
	case bad:
		return nil, cloudevent.Malformed("data.amount", "not a number")
	case fail:
		return nil, fmt.Errorf("downstream unavailable for %s", ev.ID)
	}
	add := expression.Set(expression.Name("ids"), expression.ListAppend(
		expression.IfNotExists(expression.Name("ids"), expression.Value([]string{})), expression.Value([]string{ev.ID})))
	return idempotency.Effect{idempotency.Update(f.c.tableName("AppTable"), map[string]string{"pk": "LOG#" + ev.Subject, "sk": "LOG"}, add)}, nil
}

// set marks ids in one of the pipeline's sets (f.failing, f.malformed, f.hanging), or clears
// them with on false.
func (f *pipeline) set(set map[string]bool, on bool, ids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		if on {
			set[id] = true
		} else {
			delete(set, id)
		}
	}
}

// loseAnswers makes the next n invocations that handle event id lose their answer: nothing
// of their batch is deleted, and SQS delivers it all again.
func (f *pipeline) loseAnswers(id string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lose[id] = n
}

// send sends event id of group to the LedgerQueue as a producer does, deduplicated by dedup
// (the event id on a first send; another id for a producer's re-send after SQS's five-minute
// window), with data, and returns the message id SQS gave it (the id a producer is told, and
// the one the group's held list knows it by).
func (f *pipeline) send(t *testing.T, group, id, dedup string, data any) string {
	t.Helper()
	ev, err := cloudevent.New(id, "test", "account.credited", group, fixedEventTime, data)
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.c.sqs.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(f.src), MessageBody: aws.String(string(body)),
		MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(dedup)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.MessageId)
}

// sendNew sends each event of group for the first time (deduplicated by its id), with an amount.
func (f *pipeline) sendNew(t *testing.T, group string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		f.send(t, group, id, id, map[string]int{"amount": 5})
	}
}

// consume plays the event source mapping until the LedgerQueue is empty: it receives
// batches, hands each to the consumer and deletes what it acknowledged, making the failures
// visible again at once. A batch holding a hanging event runs for functionTimeout and is
// killed: nothing of it is answered, as when a batch's answer is lost (loseAnswers).
func (f *pipeline) consume(t *testing.T) {
	t.Helper()
	for range 200 {
		if f.step(t) {
			continue
		}
		if f.c.count(t, f.src) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("LedgerQueue not drained: %d messages left", f.c.count(t, f.src))
}

// step receives one batch, if there is one, and runs one invocation on it, as consume does;
// it reports whether it received anything.
func (f *pipeline) step(t *testing.T) bool {
	t.Helper()
	out, err := f.c.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(f.src), MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		attrs := map[string]events.SQSMessageAttribute{}
		for name, a := range m.MessageAttributes {
			attrs[name] = events.SQSMessageAttribute{DataType: aws.ToString(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
		}
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: m.Attributes, MessageAttributes: attrs, EventSource: "aws:sqs", EventSourceARN: f.srcARN})
	}
	if len(ev.Records) == 0 {
		return false
	}
	answered := f.invoke(t, ev)
	for _, m := range ev.Records {
		if answered[m.MessageId] {
			_, err = f.c.sqs.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(f.src), ReceiptHandle: aws.String(m.ReceiptHandle)})
		} else {
			_, err = f.c.sqs.ChangeMessageVisibility(t.Context(), &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(f.src),
				ReceiptHandle: aws.String(m.ReceiptHandle), VisibilityTimeout: 0})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return true
}

// invoke runs one invocation of the function on ev and returns the messages it acknowledged
// (none when it was killed or its answer lost).
func (f *pipeline) invoke(t *testing.T, ev events.SQSEvent) map[string]bool {
	t.Helper()
	ctx, lost := t.Context(), false
	hangs := false
	for _, m := range ev.Records {
		id := eventIDOfBody(m.Body)
		h, err := f.hangs(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		hangs = hangs || h
		f.mu.Lock()
		if f.lose[id] > 0 {
			f.lose[id]--
			lost = true
		}
		f.mu.Unlock()
	}
	if hangs {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, functionTimeout)
		defer cancel()
	}
	resp, err := f.p.Handle(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if lost || ctx.Err() != nil {
		return nil
	}
	answered := map[string]bool{}
	for _, m := range ev.Records {
		answered[m.MessageId] = !slices.ContainsFunc(resp.BatchItemFailures, func(b events.SQSBatchItemFailure) bool { return b.ItemIdentifier == m.MessageId })
	}
	return answered
}

func eventIDOfBody(body string) string {
	var ev struct{ ID string }
	_ = json.Unmarshal([]byte(body), &ev)
	return ev.ID
}

// count is how many messages the queue holds, visible or not.
func (c *cloud) count(t *testing.T, url string) int {
	visible, held := c.depth(t, url)
	return visible + held
}

// depth is how many messages the queue holds visible, and how many out of view (received).
func (c *cloud) depth(t *testing.T, url string) (visible, held int) {
	t.Helper()
	out, err := c.sqs.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	visible, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	held, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return visible, held
}

// letters is how many letters the dead-letter queue holds.
func (f *pipeline) letters(t *testing.T) int { return f.c.count(t, f.dlq) }

// inView returns the letters of the dead-letter queue in view (on a FIFO queue, each group's
// first), leaving them where they are.
func (f *pipeline) inView(t *testing.T) []deadletter.Letter {
	t.Helper()
	var got []deadletter.Letter
	if err := dlq.Browse(t.Context(), f.c.sqs, f.dlq, func(l deadletter.Letter) bool { got = append(got, l); return true }); err != nil {
		t.Fatal(err)
	}
	return got
}

// applied reads the account's log: the events applied, in commit order.
func (f *pipeline) applied(t *testing.T, group string) []string {
	t.Helper()
	out, err := f.c.db.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(f.c.tableName("AppTable")), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "LOG#" + group}, "sk": &types.AttributeValueMemberS{Value: "LOG"}}})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ IDs []string }
	if err := attributevalue.UnmarshalMap(out.Item, &v); err != nil {
		t.Fatal(err)
	}
	return v.IDs
}

func (f *pipeline) wantApplied(t *testing.T, group string, want ...string) {
	t.Helper()
	if got := f.applied(t, group); !slices.Equal(got, want) {
		t.Errorf("account %s applied %v; want %v", group, got, want)
	}
}

// Helpers of the runbook's tests of a crasher's letter moved by SQS with a group-mate's (the
// recovery model's scenarios 18 and 20): the group's two moved letters, the crasher's first.

// crasherFirst fails the test unless the dead-letter queue holds the group's two moved letters,
// crasher's in view (the local queue shows a group's first), and says what it holds.
func (f *pipeline) crasherFirst(t *testing.T, crasher, when string) {
	t.Helper()
	if ls := f.inView(t); f.letters(t) != 2 || len(ls) != 1 || ls[0].EventID != crasher {
		t.Fatalf("%s %d letters, in view %s; want two, %s's first", when, f.letters(t), letterList(ls), crasher)
	}
}

// wantLoop redrives the group as the runbook did before it decided the crasher's letter, and
// requires the loop that made that wrong: nothing applied, both letters back, the crasher's
// first, as before.
func (f *pipeline) wantLoop(t *testing.T, group, crasher, when string) {
	t.Helper()
	if code, out := f.cli(t, "dlq", "redrive", "--group", group); code != 0 || !strings.Contains(out, "moved 2,") {
		t.Fatalf("dlq redrive %s: exit %d (%s); want both letters moved", when, code, lastLines(out, 2))
	}
	f.consume(t)
	if got := f.applied(t, group); len(got) != 0 {
		t.Fatalf("after a redrive %s: applied %v; want nothing applied", when, got)
	}
	f.crasherFirst(t, crasher, "after a redrive "+when+":")
}

// decideCrasher decides the crasher's moved letter as the runbook says: discarded, or its
// cause fixed (it hangs no more); it reports whether the crasher is to be applied.
func (f *pipeline) decideCrasher(t *testing.T, crasher, decision string) bool {
	t.Helper()
	if decision == "discarded" {
		if code, out := f.cli(t, "dlq", "discard", "--why", "crashes the function", crasher); code != 0 {
			t.Fatalf("dlq discard %s: exit %d (%s)", crasher, code, lastLines(out, 3))
		}
		return false
	}
	f.set(f.hanging, false, crasher)
	return true
}

// redriveRounds runs the runbook's redrive of the group, with live traffic (live, sent behind
// the first round's letters), and again while letters are left (one held behind another is
// redriven once its blocker is applied), three rounds at most.
func (f *pipeline) redriveRounds(t *testing.T, group, live string) {
	t.Helper()
	for round := 0; round < 3 && (round == 0 || f.letters(t) > 0); round++ {
		if code, out := f.cli(t, "dlq", "redrive", "--group", group); code != 0 {
			t.Fatalf("dlq redrive: exit %d (%s)", code, lastLines(out, 2))
		}
		if round == 0 {
			f.sendNew(t, group, live)
		}
		f.consume(t)
	}
}

// wantSettled fails the test unless the account applied exactly applied, in order, is not
// held, and the dead-letter queue holds nothing (when says when, in the messages).
func (f *pipeline) wantSettled(t *testing.T, group, when string, applied ...string) {
	t.Helper()
	f.wantApplied(t, group, applied...)
	f.wantFree(t, group, when)
	if n := f.letters(t); n != 0 {
		t.Errorf("%s the dead-letter queue holds %d letters, in view %s; want none", when, n, letterList(f.inView(t)))
	}
}

// wantDiscardable fails the test when the dead-letter queue holds a letter of event id that
// the runbook's dlq discard refuses: one that would stay there for good.
func (f *pipeline) wantDiscardable(t *testing.T, id string) {
	t.Helper()
	if f.letters(t) == 0 {
		return
	}
	if code, out := f.cli(t, "dlq", "discard", "--why", "sent again", id); code != 0 && strings.Contains(out, "refused") {
		t.Errorf("the runbook's dlq discard of %s's letter: exit %d: %s", id, code, lastLines(out, 1))
	}
}

// hold returns the group's hold and whether it holds the group.
func (f *pipeline) hold(t *testing.T, group string) (operator.Hold, bool) {
	t.Helper()
	h, ok, err := f.admin.Hold(t.Context(), "ledger", group)
	if err != nil {
		t.Fatal(err)
	}
	return h, ok
}

// wantFree fails the test when the group is still held, saying behind what.
func (f *pipeline) wantFree(t *testing.T, group, when string) {
	t.Helper()
	if h, ok := f.hold(t, group); ok {
		t.Errorf("%s account %s is still held behind %s", when, group, heldList(h))
	}
}

// heldList names the entries of a hold, in order.
func heldList(h operator.Hold) string {
	var s []string
	for _, e := range h.Held {
		s = append(s, e.String())
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// cli runs an operator's command on the cloud's dead-letter queue and consumer, answering yes.
func (f *pipeline) cli(t *testing.T, args ...string) (int, string) {
	t.Helper()
	switch strings.Join(args[:2], " ") {
	case "dlq discard":
		args = append(args, "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--by", "ops", "--yes")
	case "dlq redrive":
		args = append(args, "--queue", "LedgerDeadLetterQueue")
	case "hold skip":
		args = append(args, "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--yes")
	case "hold release":
		args = append(args, "--consumer", "ledger", "--yes")
	}
	return f.c.onceflow(t, "", args...)
}

// letterList names letters by event id and reason, for a failure message.
func letterList(ls []deadletter.Letter) string {
	var s []string
	for _, l := range ls {
		s = append(s, l.EventID+" ("+l.Why()+")")
	}
	return "[" + strings.Join(s, "; ") + "]"
}

// lastLines is the last n lines of s, for a failure message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
