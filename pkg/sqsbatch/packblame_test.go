package sqsbatch_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// throttleItem cancels every transaction updating an item whose pk ends in suffix as DynamoDB
// cancels one whose item is throttled (a hot partition): a TransactionCanceledException whose
// reason for that item is ThrottlingError and None for every other item.
func throttleItem(suffix string) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("ThrottleItem",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput)
				if !ok {
					return next.HandleInitialize(ctx, in)
				}
				reasons := make([]types.CancellationReason, len(tx.TransactItems))
				throttled := false
				for i, it := range tx.TransactItems {
					reasons[i].Code = aws.String("None")
					if it.Update != nil && strings.HasSuffix(it.Update.Key["pk"].(*types.AttributeValueMemberS).Value, suffix) {
						reasons[i].Code, throttled = aws.String("ThrottlingError"), true
					}
				}
				if !throttled {
					return next.HandleInitialize(ctx, in)
				}
				return middleware.InitializeOutput{}, middleware.Metadata{}, &types.TransactionCanceledException{
					Message: aws.String("Transaction cancelled [injected]"), CancellationReasons: reasons}
			}), middleware.Before)
	}
}

// blameDeadLetters records what the processor dead-letters.
type blameDeadLetters struct {
	mu  sync.Mutex
	ids []string
}

func (d *blameDeadLetters) DeadLetter(_ context.Context, msg events.SQSMessage, _ error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ids = append(d.ids, msg.MessageId)
	return nil
}

// A message packed with another whose item stays throttled is applied as it would be alone:
// the throttle is the other message's failure, not its own, so it is neither failed, nor
// counted as a failed attempt, nor dead-lettered after MaxAttempts batches.
func TestPacking_a_pack_mates_throttled_item_fails_only_that_message(t *testing.T) {
	e := newPackEnv(t, dynamodb.WithAPIOptions(throttleItem("#hot")))
	dead := &blameDeadLetters{}
	p := e.processor(t, sqsbatch.Config{Options: batch.Options{MaxAttempts: 2, DeadLetter: dead}}, func(c *idempotency.Config) {
		c.Retry = idempotency.Retry{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}
	})
	batch := e.batch(t, "hot/1 t.add hot 1", "a/1 t.add a 1", "b/1 t.add b 1")
	for range 2 { // the second batch is the redelivery of what the first failed
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := p.Handle(ctx, batch)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var failed []string
		for _, f := range resp.BatchItemFailures {
			failed = append(failed, f.ItemIdentifier)
		}
		if slices.Contains(failed, "a/1") || slices.Contains(failed, "b/1") {
			t.Fatalf("failed %v; want only hot/1 failed (a/1 and b/1 touch no throttled item)", failed)
		}
	}
	for _, name := range []string{"a", "b"} {
		if n := e.counter(t, name); n != 1 {
			t.Errorf("counter %s = %d; want 1", name, n)
		}
	}
	if slices.Contains(dead.ids, "a/1") || slices.Contains(dead.ids, "b/1") {
		t.Errorf("dead-lettered %v; want a/1 and b/1 never dead-lettered for hot/1's throttle", dead.ids)
	}
	if !slices.Equal(dead.ids, []string{"hot/1"}) {
		t.Errorf("dead-lettered %v; want hot/1 after its own MaxAttempts failures", dead.ids)
	}
}
