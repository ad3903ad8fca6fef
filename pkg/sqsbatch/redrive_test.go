package sqsbatch_test

import (
	"context"
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

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// backstop is the template's maxReceiveCount (template_test.go checks the template against
// the same arithmetic): a FIFO batch of 10 and the engine's default limit.
const backstop = 10 * port.DefaultMaxAttempts

// redrive is a consumer over DynamoDB Local whose handler appends each applied event's id to
// its group's log item, in commit order, and fails the events in failing transiently.
type redrive struct {
	db        *dynamodb.Client
	app       string
	mu        sync.Mutex
	failing   map[string]bool
	malformed map[string]bool // events the handler refuses as malformed
	tried     map[string]int  // event id -> Decide calls while failing
	dead      []deadLetter    // what the engine dead-lettered, in order
}

type deadLetter struct{ id, reason string }

func newRedrive(t *testing.T, failing ...string) *redrive {
	db := testkit.DynamoDB(t)
	r := &redrive{db: db, app: testkit.Table(t, db, "app", "pk"), failing: map[string]bool{}, malformed: map[string]bool{}, tried: map[string]int{}}
	for _, id := range failing {
		r.failing[id] = true
	}
	return r
}

func (r *redrive) heal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.failing)
}

func (r *redrive) Decide(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.malformed[ev.ID] {
		return nil, cloudevent.Malformed("data", "refused by this deploy")
	}
	if r.failing[ev.ID] {
		r.tried[ev.ID]++
		return nil, fmt.Errorf("downstream throttled (%s, try %d)", ev.ID, r.tried[ev.ID])
	}
	add := expression.Set(expression.Name("ids"), expression.ListAppend(
		expression.IfNotExists(expression.Name("ids"), expression.Value([]string{})), expression.Value([]string{ev.ID})))
	return idempotency.Effect{idempotency.Update(r.app, map[string]string{"pk": "LOG#" + ev.Subject}, add)}, nil
}

func (r *redrive) DeadLetter(_ context.Context, msg events.SQSMessage, reason error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dead = append(r.dead, deadLetter{msg.MessageId, reason.Error()})
	return nil
}

func (r *redrive) deadIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, d := range r.dead {
		ids = append(ids, d.id)
	}
	return ids
}

// applied reads the group's log: the events applied, in commit order.
func (r *redrive) applied(t *testing.T, group string) []string {
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

func (r *redrive) processor(t *testing.T, records string, cfg sqsbatch.Config, policy idempotency.GroupPolicy) *sqsbatch.Processor {
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	cfg.DeadLetter = r
	p, err := sqsbatch.NewConsumer(r.db, r, idempotency.Config{Name: "ledger", Table: records, Logger: quiet,
		AfterDeadLetter: policy}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fifoQueue plays SQS FIFO towards Lambda, as fauxqs cannot: every receive hands over up to
// 10 messages of the queue, several of one group, in order, counting each as received; a
// message received more than maxReceiveCount times is moved to the queue's own dead-letter
// queue (redriven) by the redrive policy, as SQS does.
type fifoQueue struct {
	msgs     []events.SQSMessage
	received map[string]int
	redriven []string
	max      int
}

func newFIFOQueue(t *testing.T, maxReceiveCount int, specs ...string) *fifoQueue {
	q := &fifoQueue{received: map[string]int{}, max: maxReceiveCount}
	for _, s := range specs {
		q.send(t, s)
	}
	return q
}

// send enqueues the event "group/n" as message "group/n"; with an id given after a "@", as a
// redrive sends it again: under that new id, carrying its first one ("group/n") as
// dlq.Redrive does (deadletter.AttrOriginalMessageID); with an id given after a "+", as
// its producer sends it again: the same event under that new id, carrying nothing.
func (q *fifoQueue) send(t *testing.T, spec string) {
	t.Helper()
	spec, msgID, _ := strings.Cut(spec, "@")
	var attrs map[string]events.SQSMessageAttribute
	switch event, resent, ok := strings.Cut(spec, "+"); {
	case ok:
		spec, msgID = event, resent
	case msgID == "":
		msgID = spec
	default:
		attrs = map[string]events.SQSMessageAttribute{deadletter.AttrOriginalMessageID: {DataType: "String", StringValue: aws.String(spec)}}
	}
	group, _, _ := strings.Cut(spec, "/")
	ev, err := cloudevent.New(t.Name()+"-"+spec, "test", "test.logged", group, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	q.msgs = append(q.msgs, events.SQSMessage{MessageId: msgID, Body: string(body), EventSource: "aws:sqs",
		EventSourceARN: fifoARN, Attributes: map[string]string{"MessageGroupId": group}, MessageAttributes: attrs})
}

// receive returns the next batch, nil when the queue is empty.
func (q *fifoQueue) receive() events.SQSEvent {
	q.msgs = slices.DeleteFunc(q.msgs, func(m events.SQSMessage) bool {
		if q.received[m.MessageId] < q.max {
			return false
		}
		q.redriven = append(q.redriven, m.MessageId)
		return true
	})
	var ev events.SQSEvent
	for _, m := range q.msgs[:min(10, len(q.msgs))] {
		q.received[m.MessageId]++
		m.Attributes = map[string]string{"MessageGroupId": m.Attributes["MessageGroupId"],
			"ApproximateReceiveCount": strconv.Itoa(q.received[m.MessageId])}
		ev.Records = append(ev.Records, m)
	}
	return ev
}

// settle deletes the messages the batch acknowledged.
func (q *fifoQueue) settle(ev events.SQSEvent, resp events.SQSEventResponse) {
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	q.msgs = slices.DeleteFunc(q.msgs, func(m events.SQSMessage) bool {
		return slices.ContainsFunc(ev.Records, func(r events.SQSMessage) bool { return r.MessageId == m.MessageId }) && !failed[m.MessageId]
	})
}

// drain runs batches until the queue is empty (or a bound is hit) and returns how many ran.
func (q *fifoQueue) drain(t *testing.T, p *sqsbatch.Processor) int {
	t.Helper()
	for n := 1; n <= 4*backstop; n++ {
		ev := q.receive()
		if len(ev.Records) == 0 {
			return n - 1
		}
		q.settle(ev, handle(t, p, t.Context(), ev))
	}
	t.Fatalf("queue not drained after %d batches: %d messages left", 4*backstop, len(q.msgs))
	return 0
}

func (r *redrive) eventID(t *testing.T, spec string) string { return t.Name() + "-" + spec }

// Group-mates behind a failing message are received again and again without being tried:
// only a message's own failures count, and only the engine dead-letters, after exactly
// DefaultMaxAttempts of them. The queue's redrive policy never moves anything.
func TestProcessor_dead_letters_a_message_after_its_own_failures_only(t *testing.T) {
	tests := []struct {
		name        string
		failing     []string // events that fail until dead-lettered
		wantDead    []string
		wantApplied []string
	}{
		{"one failing message", []string{"a/1"}, []string{"a/1"}, []string{"a/2", "a/3"}},
		{"two failing messages in a row", []string{"a/1", "a/2"}, []string{"a/1", "a/2"}, []string{"a/3"}},
		{"failing message behind applied ones", []string{"a/3"}, []string{"a/3"}, []string{"a/1", "a/2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failing []string
			for _, f := range tt.failing {
				failing = append(failing, t.Name()+"-"+f)
			}
			r := newRedrive(t, failing...)
			p := r.processor(t, testkit.Table(t, r.db, "idem", "pk"), sqsbatch.Config{}, idempotency.GoOn)
			q := newFIFOQueue(t, backstop, "a/1", "a/2", "a/3", "b/1")
			q.drain(t, p)

			if !slices.Equal(r.deadIDs(), tt.wantDead) {
				t.Errorf("engine dead-lettered %v; want %v", r.deadIDs(), tt.wantDead)
			}
			if len(q.redriven) > 0 {
				t.Errorf("the queue's redrive policy moved %v; want nothing (maxReceiveCount %d is a backstop)", q.redriven, backstop)
			}
			for _, f := range failing {
				if got := r.tried[f]; got != port.DefaultMaxAttempts {
					t.Errorf("%s tried %d times; want exactly %d", f, got, port.DefaultMaxAttempts)
				}
			}
			for _, d := range r.dead {
				want := fmt.Sprintf("failed %d times: ", port.DefaultMaxAttempts)
				if !strings.Contains(d.reason, want) || !strings.Contains(d.reason, "downstream throttled") {
					t.Errorf("reason of %s = %q; want %q and the last error", d.id, d.reason, want)
				}
			}
			var want []string
			for _, a := range tt.wantApplied {
				want = append(want, t.Name()+"-"+a)
			}
			if got := r.applied(t, "a"); !slices.Equal(got, want) {
				t.Errorf("group a applied %v; want %v", got, want)
			}
			if got := r.applied(t, "b"); len(got) != 1 {
				t.Errorf("group b applied %v; want its one message", got)
			}
		})
	}
}

// A configured limit replaces the default.
func TestProcessor_MaxAttempts_sets_the_limit(t *testing.T) {
	r := newRedrive(t, t.Name()+"-a/1")
	p := r.processor(t, testkit.Table(t, r.db, "idem", "pk"), sqsbatch.Config{Options: batch.Options{MaxAttempts: 2}}, idempotency.GoOn)
	q := newFIFOQueue(t, backstop, "a/1", "a/2")
	if n := q.drain(t, p); n != 2 {
		t.Errorf("drained in %d batches; want 2 (two own failures)", n)
	}
	if got := r.tried[t.Name()+"-a/1"]; got != 2 || !slices.Equal(r.deadIDs(), []string{"a/1"}) {
		t.Errorf("tried %d times, dead-lettered %v; want 2 and [a/1]", got, r.deadIDs())
	}
}

// Hold: once a message of a group is dead-lettered, every later message of that group, in
// this batch and in later ones, is parked in the dead-letter queue in order, naming the
// message it was held behind, and nothing of the group is applied out of order. A redrive of
// the dead-letter queue in its order applies them all in order and releases the group; other
// groups go on throughout.
func TestProcessor_hold_policy_parks_the_rest_of_the_group_in_order(t *testing.T) {
	r := newRedrive(t, t.Name()+"-a/1")
	p := r.processor(t, testkit.Table(t, r.db, "idem", "pk"), sqsbatch.Config{}, idempotency.HoldGroup)
	q := newFIFOQueue(t, backstop, "a/1", "a/2", "b/1", "a/3")
	q.drain(t, p)
	q.send(t, "a/4") // a later batch
	q.send(t, "b/2")
	q.drain(t, p)

	if want := []string{"a/1", "a/2", "a/3", "a/4"}; !slices.Equal(r.deadIDs(), want) {
		t.Fatalf("dead-lettered %v; want %v in order", r.deadIDs(), want)
	}
	for _, d := range r.dead[1:] {
		if !strings.Contains(d.reason, "held behind") || !strings.Contains(d.reason, r.eventID(t, "a/1")) {
			t.Errorf("reason of %s = %q; want it held behind event %s", d.id, d.reason, r.eventID(t, "a/1"))
		}
	}
	if got := r.applied(t, "a"); len(got) != 0 {
		t.Errorf("group a applied %v while held; want nothing", got)
	}
	if got := r.applied(t, "b"); len(got) != 2 {
		t.Errorf("group b applied %v; want both of its messages", got)
	}

	r.heal() // the cause is fixed; a person redrives the dead-letter queue, in its order
	for _, d := range r.deadIDs() {
		q.send(t, d+"@redriven-"+d)
	}
	q.drain(t, p)
	want := []string{r.eventID(t, "a/1"), r.eventID(t, "a/2"), r.eventID(t, "a/3"), r.eventID(t, "a/4")}
	if got := r.applied(t, "a"); !slices.Equal(got, want) {
		t.Errorf("after the redrive group a applied %v; want %v", got, want)
	}
	q.send(t, "a/5")
	q.drain(t, p)
	if got := r.applied(t, "a"); len(got) != 5 {
		t.Errorf("after the redrive group a applied %v; want a/5 applied too (the hold released)", got)
	}
}
