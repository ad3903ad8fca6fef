package testenv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// ReplayPort is a stream port's Processor as StreamReplay runs it: its stream handler (the
// failed sequence numbers of a batch) and its replay queue's handler.
type ReplayPort[R any] struct {
	Stream func(recs []R) []string
	Replay func(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse
}

// replayMaxReceiveCount is the replay queue's maxReceiveCount in StreamReplay.
const replayMaxReceiveCount = 3

// StreamReplay checks a stream port's replay path against the emulators, on a stream of its own
// per case, the consumer ("totals", HoldGroup) appending each record's amount to its item's
// list: a held key's letters redriven to the consumer's replay queue (dlq.Redrive) are
// applied in the key's order while the stream goes on, its live records held behind and then
// applied after them, one replay's answer lost (the function crashed after its commit) changing
// nothing; and a replay the queue moves by itself (every receive crashed) holds its key on its
// last receives (the backstop), so that the key's next live record waits behind it until it is
// redriven and applied. newPort builds the port's test; replay builds its Processor over e.
// The cases run beside each other (t.Parallel): newPort and replay must change nothing of the
// process.
func StreamReplay[R any](t *testing.T, newPort func(t *testing.T) StreamPort[R],
	replay func(t *testing.T, e port.Engine, dl *deadletter.Queue, rc batch.ReplayConfig) ReplayPort[R]) {
	t.Run("a held key is replayed in order while its stream goes on", func(t *testing.T) {
		t.Parallel() // a stream, tables and queues of its own
		g := newReplayRig(t, newPort(t), replay)
		g.port.FailOnce("a", 1, idempotency.Permanent(errors.New("downstream refused it")))
		g.write("a", 1)
		g.write("a", 2)
		g.write("b", 1)
		g.streamOn()
		g.write("a", 3) // live, while a is held
		g.streamOn()
		g.wantHeld("a", 3)
		if got := g.port.Applied(t, "b"); !slices.Equal(got, []int{1}) {
			t.Fatalf("b applied %v; want [1]: the shard goes on past a's letters", got)
		}
		if n := g.redrive(); n != 3 {
			t.Fatalf("redrive moved %d letters; want a's 3, to the replay queue", n)
		}
		g.write("a", 4) // live, during the replay: held behind, redriven next
		g.streamOn()
		if n := g.replayOnce(true); n != 1 { // its answer lost: the function crashed after its commit
			t.Fatalf("replay received %d messages; want a's first", n)
		}
		g.write("a", 5)
		g.streamOn()
		g.recoverAll()
		g.wantHeld("a", 0)
		g.write("a", 6) // the key is free: applied from the stream
		g.streamOn()
		if got := g.port.Applied(t, "a"); !slices.Equal(got, []int{1, 2, 3, 4, 5, 6}) {
			t.Errorf("a applied %v; want [1 2 3 4 5 6]: its letters in order, each once, then its live records", got)
		}
		if n := QueueDepth(t, g.sqs, g.dlqURL) + QueueDepth(t, g.sqs, g.rq); n != 0 {
			t.Errorf("%d messages left in the dead-letter and replay queues; want none", n)
		}
	})

	t.Run("a replay the queue moves by itself holds its key until it is redriven", func(t *testing.T) {
		t.Parallel() // a stream, tables and queues of its own
		g := newReplayRig(t, newPort(t), replay)
		g.port.FailOnce("c", 1, idempotency.Permanent(errors.New("downstream refused it")))
		g.write("c", 1)
		g.streamOn()
		if _, _, err := g.admin.ReleaseHold(t.Context(), "totals", g.groups["c"]); err != nil { // the operator gave up c's order
			t.Fatal(err)
		}
		g.wantHeld("c", 0)
		if n := g.redrive(); n != 1 {
			t.Fatalf("redrive moved %d letters; want c's", n)
		}
		for receive := 1; receive <= replayMaxReceiveCount; receive++ { // every invocation crashes, or times out
			if n := g.replayCrashing(); n != 1 {
				t.Fatalf("receive %d of the replay: %d messages; want c's", receive, n)
			}
		}
		testkit.Eventually(t, 20*time.Second, func() error { // the queue moves it to the dead-letter queue
			if g.receiveReplay() != 0 || QueueDepth(t, g.sqs, g.dlqURL) != 1 {
				return errors.New("c's replay not moved to the dead-letter queue yet")
			}
			return nil
		})
		g.wantHeld("c", 1) // by the backstop, naming c's record
		g.write("c", 2)
		g.streamOn()
		g.wantHeld("c", 2)
		if got := g.port.Applied(t, "c"); len(got) != 0 {
			t.Fatalf("c applied %v while its first record's replay was moved; want nothing", got)
		}
		g.recoverAll()
		g.wantHeld("c", 0)
		if got := g.port.Applied(t, "c"); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("c applied %v; want [1 2]: the moved replay first, then the record held behind it", got)
		}
	})
}

// replayRig is one StreamReplay case: the port's stream, its consumer's dead-letter queue and
// replay queue (redriving to it after replayMaxReceiveCount receives) on fauxqs.
type replayRig[R any] struct {
	t                 *testing.T
	port              StreamPort[R]
	proc              ReplayPort[R]
	sqs               *sqs.Client
	dlqURL, rq, rqARN string
	admin             *operator.Admin
	handled           int               // records the stream delivered so far
	groups            map[string]string // item → its key, as the port names it (the hold's group)
}

func newReplayRig[R any](t *testing.T, port StreamPort[R],
	replay func(t *testing.T, e port.Engine, dl *deadletter.Queue, rc batch.ReplayConfig) ReplayPort[R]) *replayRig[R] {
	t.Helper()
	g := &replayRig[R]{t: t, port: port, sqs: testkit.SQS(t), groups: map[string]string{}, admin: operator.New(testkit.DynamoDB(t), port.Table)}
	g.dlqURL = g.queue("totals-dlqURL", nil)
	dlqARN := g.arn(g.dlqURL)
	g.rq = g.queue("totals-replay", map[string]string{"VisibilityTimeout": "30",
		"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":%d}`, dlqARN, replayMaxReceiveCount)})
	g.rqARN = g.arn(g.rq)
	c, err := idempotency.New(testkit.DynamoDB(t), port.Decide, idempotency.Config{Name: "totals", Table: port.Table,
		CacheSize: -1, AfterDeadLetter: idempotency.HoldGroup})
	if err != nil {
		t.Fatal(err)
	}
	g.proc = replay(t, c.Engine(), deadletter.New(g.sqs, g.dlqURL), batch.ReplayConfig{MaxReceiveCount: replayMaxReceiveCount})
	return g
}

func (g *replayRig[R]) queue(prefix string, attrs map[string]string) string {
	g.t.Helper()
	all := map[string]string{"FifoQueue": "true"}
	for k, v := range attrs {
		all[k] = v
	}
	out, err := g.sqs.CreateQueue(g.t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(testkit.Name(prefix) + ".fifo"), Attributes: all})
	if err != nil {
		g.t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl)
}

func (g *replayRig[R]) arn(url string) string {
	g.t.Helper()
	out, err := g.sqs.GetQueueAttributes(g.t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		g.t.Fatal(err)
	}
	return out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

// write writes a record of item with amount n to the stream, and learns item's key.
func (g *replayRig[R]) write(item string, n int) {
	g.t.Helper()
	g.port.Write(g.t, item, n)
	if _, ok := g.groups[item]; !ok {
		recs := g.port.Records(g.t)
		g.groups[item] = g.port.Group(recs[len(recs)-1])
	}
}

// streamOn delivers the stream's new records, as Lambda does once the shard moved on: none may
// fail (a letter, held or not, is done with).
func (g *replayRig[R]) streamOn() {
	g.t.Helper()
	recs := g.port.Records(g.t)
	if failed := g.proc.Stream(recs[g.handled:]); len(failed) != 0 {
		g.t.Fatalf("the stream's batch failed at %v; want every record done with (applied, or dead-lettered)", failed)
	}
	g.handled = len(recs)
}

// wantHeld checks how many records the hold of item's key lists.
func (g *replayRig[R]) wantHeld(item string, n int) {
	g.t.Helper()
	h, ok, err := g.admin.Hold(g.t.Context(), "totals", g.groups[item])
	if err != nil {
		g.t.Fatal(err)
	}
	if got := len(h.Held); !ok && n != 0 || ok && got != n {
		g.t.Fatalf("%s's hold lists %d records (held: %v); want %d", item, got, ok, n)
	}
}

// redrive moves the dead-letter queue's letters to the replay queue and returns how many.
func (g *replayRig[R]) redrive() int {
	g.t.Helper()
	moved := 0
	err := dlq.Redrive(g.t.Context(), dlq.RedriveConfig{Client: g.sqs, Queue: g.dlqURL, Replay: g.rq}, func(r dlq.Redriven) {
		if r.Outcome == dlq.Moved {
			moved++
		}
		if r.Err != nil {
			g.t.Errorf("redrive %s: %v", r.Letter.MessageID, r.Err)
		}
	})
	if err != nil {
		g.t.Fatal(err)
	}
	return moved
}

// recoverAll redrives and replays until neither moves anything, as an operator runs the
// runbook's redrive again until it moves nothing; a few rounds at most, else the key's letters
// go round for ever (a replay held behind its own entry, dead-lettered again each time).
func (g *replayRig[R]) recoverAll() {
	g.t.Helper()
	for round := 0; g.redrive()+g.replayAll() > 0; round++ {
		if round == 10 {
			g.t.Fatal("the letters are still redriven and replayed after 10 rounds; want the key's letters applied, each once")
		}
	}
}

// receive takes the replay queue's next messages (fauxqs: one per group) as Lambda's event.
func (g *replayRig[R]) receive() ([]sqstypes.Message, events.SQSEvent) {
	g.t.Helper()
	out, err := g.sqs.ReceiveMessage(g.t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(g.rq), MaxNumberOfMessages: 10,
		WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	if err != nil {
		g.t.Fatal(err)
	}
	return out.Messages, sqsbatch.EventOf(out.Messages, g.rqARN)
}

// replayOnce runs the replay queue's next messages through the port and, as Lambda does,
// deletes those it did not report failed, unless lost (its answer never reached Lambda); every
// other is visible again at once. It returns how many it received.
func (g *replayRig[R]) replayOnce(lost bool) int {
	g.t.Helper()
	msgs, ev := g.receive()
	if len(msgs) == 0 {
		return 0
	}
	resp := g.proc.Replay(g.t.Context(), ev)
	for _, m := range msgs {
		failed := slices.ContainsFunc(resp.BatchItemFailures, func(f events.SQSBatchItemFailure) bool { return f.ItemIdentifier == aws.ToString(m.MessageId) })
		if failed || lost {
			g.visible(m)
			continue
		}
		if _, err := g.sqs.DeleteMessage(g.t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(g.rq), ReceiptHandle: m.ReceiptHandle}); err != nil {
			g.t.Fatal(err)
		}
	}
	return len(msgs)
}

// replayAll replays until the replay queue hands out nothing, and returns how many it received.
func (g *replayRig[R]) replayAll() int {
	g.t.Helper()
	total := 0
	for n := g.replayOnce(false); n > 0; n = g.replayOnce(false) {
		total += n
	}
	return total
}

// replayCrashing is one receive of the replay queue whose invocation crashes before it handles
// anything: the port's Handle runs out of time at once (its backstop runs, no message starts),
// and the messages come back. It returns how many it received.
func (g *replayRig[R]) replayCrashing() int {
	g.t.Helper()
	msgs, ev := g.receive()
	if len(msgs) > 0 {
		ctx, cancel := context.WithTimeout(g.t.Context(), time.Second) // under the port's DeadlineMargin
		resp := g.proc.Replay(ctx, ev)
		cancel()
		if len(resp.BatchItemFailures) != len(msgs) {
			g.t.Fatalf("a replay out of time answered %d failures of %d messages; want every one", len(resp.BatchItemFailures), len(msgs))
		}
	}
	for _, m := range msgs {
		g.visible(m)
	}
	return len(msgs)
}

// receiveReplay receives the replay queue once and lets what it got go: how many it got.
func (g *replayRig[R]) receiveReplay() int {
	msgs, _ := g.receive()
	for _, m := range msgs {
		g.visible(m)
	}
	return len(msgs)
}

func (g *replayRig[R]) visible(m sqstypes.Message) {
	g.t.Helper()
	if _, err := g.sqs.ChangeMessageVisibility(g.t.Context(), &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(g.rq),
		ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		g.t.Fatal(err)
	}
}
