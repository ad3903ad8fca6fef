package main

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// x is malformed: held and dead-lettered, but the answer of that invocation is lost, so SQS
// delivers x again and the consumer holds its account behind it once more. The runbook's
// operator discards x's letter at that very moment: the discard commits after the consumer
// has seen that x is not discarded and before its hold write lands. The second letter is the
// first one's repeat (SQS drops it within five minutes), so were the hold written, the account
// would be held behind an event no letter shows. The discard must win: the account goes on.
func TestRecovery_a_discard_that_commits_while_its_event_is_held_again_leaves_the_group_free(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	before := &beforeHoldWrite{}
	f := c.pipeline(t, pipelineConfig{DynamoDB: []func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, before.middleware)
	}}})
	f.set(f.malformed, true, "x")
	f.loseAnswers("x", 1)
	f.sendNew(t, "acct", "x")
	if !f.step(t) || f.letters(t) != 1 {
		t.Fatalf("x's first delivery: %d letters; want x dead-lettered", f.letters(t))
	}
	discarded := make(chan int, 1)
	before.arm(func() { // the operator's discard, between the consumer's check and its write
		code, _ := f.cli(t, "dlq", "discard", "--why", "producer bug", "x")
		discarded <- code
	})
	f.consume(t) // x delivered again
	select {
	case code := <-discarded:
		if code != 0 {
			t.Fatalf("dlq discard during the redelivery: exit %d; want x discarded", code)
		}
	default: // no hold written on the redelivery: nothing for the discard to race with
		t.Log("x's redelivery wrote no hold: discarding after it")
		if code, _ := f.cli(t, "dlq", "discard", "--why", "producer bug", "x"); code != 0 {
			t.Fatalf("dlq discard: exit %d; want x discarded", code)
		}
	}
	f.sendNew(t, "acct", "e2")
	f.consume(t)

	f.wantSettled(t, "acct", "after the discard,", "e2")
}

// beforeHoldWrite is an SDK middleware on the consumer's DynamoDB client that, once armed,
// runs a function before the first request that writes a group's hold item (a Put, Update or
// Delete of a key the engine's holds start with), then lets the request go.
type beforeHoldWrite struct {
	mu sync.Mutex
	do func()
}

func (b *beforeHoldWrite) arm(do func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.do = do
}

func (b *beforeHoldWrite) middleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("BeforeHoldWrite",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if fault.Writes(in.Parameters, "#hold#") {
				b.mu.Lock()
				do := b.do
				b.do = nil
				b.mu.Unlock()
				if do != nil {
					do()
				}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
}
