package batchtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// errNegative is the handler's permanent error: a negative amount can never be applied.
var errNegative = errors.New("negative amount")

// env is one case's world: the port's harness, a consumer on DynamoDB Local whose handler
// appends each event's amount to its group's list in a totals table, and the letters the port
// dead-lettered.
type env[R any] struct {
	h      Harness[R]
	db     *dynamodb.Client
	totals string
	idem   string
	prefix string // of the case's event ids

	mu      sync.Mutex
	fails   map[string]error // event id -> the error its next Decide returns (once)
	sinkErr error            // the error the next dead-letter send returns (once)
	letters []letter
}

// letter is what the port dead-lettered.
type letter struct {
	msg    events.SQSMessage
	reason error
}

// amount is an event's data.
type amount struct {
	Group string `json:"group"`
	N     int    `json:"n"`
}

func newEnv[R any](t *testing.T, h Harness[R]) *env[R] {
	t.Helper()
	db := testkit.DynamoDB(t)
	return &env[R]{h: h, db: db, totals: testkit.Table(t, db, "totals", "pk"), idem: testkit.IdempotencyTable(t, db),
		prefix: testkit.Name("ev"), fails: map[string]error{}}
}

// port is the harness's handler over a new consumer of the totals, under policy.
func (e *env[R]) port(t *testing.T, policy idempotency.GroupPolicy, opts Options) Handler[R] {
	t.Helper()
	c, err := idempotency.New(e.db, idempotency.HandlerFunc(e.decide), idempotency.Config{Name: "totals", Table: e.idem,
		CacheSize: -1, AfterDeadLetter: policy, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	if err != nil {
		t.Fatal(err)
	}
	return e.h.Port(t, c.Engine(), e, opts)
}

// DeadLetter records a letter: env is the port's dead-letter sink.
func (e *env[R]) DeadLetter(_ context.Context, msg events.SQSMessage, reason error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.sinkErr; err != nil {
		e.sinkErr = nil
		return err
	}
	e.letters = append(e.letters, letter{msg: msg, reason: reason})
	return nil
}

// failSinkOnce makes the next dead-letter send fail with err.
func (e *env[R]) failSinkOnce(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sinkErr = err
}

func (e *env[R]) dead() []letter {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.letters)
}

// id is the event id of group's amount n in this case.
func (e *env[R]) id(group string, n int) string { return fmt.Sprintf("%s/%s/%d", e.prefix, group, n) }

// event is a message of group carrying the event of amount n.
func (e *env[R]) event(t *testing.T, group string, n int) Message {
	t.Helper()
	body, err := cloudevent.Encode(cloudevent.Event{SpecVersion: "1.0", ID: e.id(group, n), Source: "batchtest",
		Type: "batchtest.amount", Subject: group, Data: fmt.Appendf(nil, `{"group":%q,"n":%d}`, group, n)})
	if err != nil {
		t.Fatal(err)
	}
	return Message{Group: group, Body: body}
}

// records makes the records of group/amount pairs: "a", 1, "b", 1, ...
func (e *env[R]) records(t *testing.T, spec ...any) []R {
	t.Helper()
	var msgs []Message
	for i := 0; i+1 < len(spec); i += 2 {
		msgs = append(msgs, e.event(t, spec[i].(string), spec[i+1].(int)))
	}
	return e.h.Records(t, msgs...)
}

func (e *env[R]) failOnce(group string, n int, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fails[e.id(group, n)] = err
}

// decide appends the event's amount to its group's list; a negative amount can never succeed.
func (e *env[R]) decide(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
	var a amount
	if err := cloudevent.DecodeData(ev, &a); err != nil {
		return nil, err
	}
	e.mu.Lock()
	fail := e.fails[ev.ID]
	delete(e.fails, ev.ID)
	e.mu.Unlock()
	switch {
	case fail != nil:
		return nil, fail
	case a.N < 0:
		return nil, idempotency.Permanent(errNegative)
	}
	return idempotency.Effect{idempotency.Update(e.totals, map[string]string{"pk": a.Group},
		expression.Set(expression.Name("applied"), expression.ListAppend(
			expression.IfNotExists(expression.Name("applied"), expression.Value([]int{})), expression.Value([]int{a.N}))))}, nil
}

// applied returns the amounts applied to group, in the order they were.
func (e *env[R]) applied(t *testing.T, group string) []int {
	t.Helper()
	out, err := e.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(e.totals),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: group}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Applied []int }
	if err := attributevalue.UnmarshalMap(out.Item, &got); err != nil {
		t.Fatal(err)
	}
	return got.Applied
}

// expectApplied checks the amounts applied to each group: want is group, []int pairs.
func (e *env[R]) expectApplied(t *testing.T, when string, want ...any) {
	t.Helper()
	for i := 0; i+1 < len(want); i += 2 {
		g, w := want[i].(string), want[i+1].([]int)
		if got := e.applied(t, g); !slices.Equal(got, w) {
			t.Errorf("%s: group %s applied %v; want %v", when, g, got, w)
		}
	}
}

// reported is what the response must report when the records of recs at indexes failed (in
// batch order) were not done with: every one's id, or, from a source that checkpoints, the
// first's.
func (e *env[R]) reported(recs []R, failed ...int) []string {
	var ids []string
	for _, i := range failed {
		ids = append(ids, e.h.ID(recs[i]))
	}
	if e.h.Source().Checkpoints && len(ids) > 1 {
		ids = ids[:1]
	}
	return ids
}

// handle delivers recs to p and checks that the response reports the records at indexes
// failed, as reported says.
func (e *env[R]) handle(t *testing.T, when string, p Handler[R], recs []R, failed ...int) []string {
	t.Helper()
	got := p(context.Background(), recs)
	if want := e.reported(recs, failed...); !slices.Equal(got, want) {
		t.Fatalf("%s: the response reported %v failed; want %v", when, got, want)
	}
	return got
}

// redelivery is what the source delivers again after the response reported failed for recs.
func (e *env[R]) redelivery(recs []R, failed []string) []R {
	var again []R
	for i, r := range recs {
		switch {
		case e.h.Source().Checkpoints && len(failed) > 0 && e.h.ID(r) == failed[0]:
			for _, r := range recs[i:] {
				again = append(again, e.h.Again(r))
			}
			return again
		case !e.h.Source().Checkpoints && slices.Contains(failed, e.h.ID(r)):
			again = append(again, e.h.Again(r))
		}
	}
	return again
}

// all is every record of recs delivered again.
func (e *env[R]) all(recs []R) []R {
	again := make([]R, len(recs))
	for i, r := range recs {
		again[i] = e.h.Again(r)
	}
	return again
}
