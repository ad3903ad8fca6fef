package batchtest

import (
	"testing"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// Run runs the conformance suite against the port newHarness makes, one subtest per
// behaviour, in parallel, each on a harness, tables and event ids of its own. It needs DynamoDB
// Local (testkit.DynamoDB): under `go test -short` the subtests skip.
func Run[R any](t *testing.T, newHarness func(t *testing.T) Harness[R]) {
	cases := []suiteCase[R]{
		{"each event is applied once across a batch, its redelivery and the whole batch's", appliedOnce[R]},
		{"each group is applied in batch order", groupOrder[R]},
		{"a transient failure holds back the rest of its group and a redelivery applies them once in order", func(t *testing.T, e *env[R]) {
			transient(t, e, Options{})
		}},
		{"unpacked, a transient failure holds back the rest of its group and a redelivery applies them once in order", func(t *testing.T, e *env[R]) {
			transient(t, e, Options{NoPacking: true})
		}},
		{"a duplicate of an applied event in a new record is not applied again", duplicate[R]},
	}
	for _, p := range []struct {
		name   string
		policy idempotency.GroupPolicy
	}{{"GoOn", idempotency.GoOn}, {"HoldGroup", idempotency.HoldGroup}} {
		for _, k := range []struct {
			name, reason string
			body         func(e *env[R], t *testing.T) Message
		}{
			{"a malformed record", "malformed", func(_ *env[R], _ *testing.T) Message { return Message{Group: "a", Body: []byte("not an event")} }},
			{"an event its handler refuses", errNegative.Error(), func(e *env[R], t *testing.T) Message { return e.event(t, "a", -2) }},
		} {
			cases = append(cases, suiteCase[R]{k.name + " is dead-lettered with its reason under " + p.name, func(t *testing.T, e *env[R]) {
				permanent(t, e, p.policy, k.body(e, t), k.reason)
			}})
		}
		cases = append(cases, suiteCase[R]{"a record whose dead-letter send fails is reported failed and dead-lettered on its redelivery under " + p.name,
			func(t *testing.T, e *env[R]) { sinkFails(t, e, p.policy) }})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			testkit.SkipShort(t) // before the harness starts anything
			e := newEnv(t, newHarness(t))
			c.run(t, e)
		})
	}
}

// suiteCase is one behaviour the suite checks, on an env of its own.
type suiteCase[R any] struct {
	name string
	run  func(t *testing.T, e *env[R])
}
