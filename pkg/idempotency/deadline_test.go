package idempotency_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A DynamoDB endpoint that accepts connections and never answers: a hung request.
func blackHole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return "http://" + l.Addr().String()
}

// A hung commit is given up Retry.Margin before the invocation's deadline, leaving time to
// report the failure. Each call's own deadline shows it, whatever the load.
func TestConsumer_a_hung_commit_gives_up_before_the_invocation_deadline(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls []string // each call, with its deadline
	var late []string  // the calls whose deadline is not Retry.Margin before the invocation's
	const margin = 400 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	db := dynamodb.NewFromConfig(testkit.Config(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(blackHole(t))
		o.RetryMaxAttempts = 1
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("deadlines", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				end, ok := ctx.Deadline()
				call := fmt.Sprintf("%s until %v", middleware.GetOperationName(ctx), end)
				mu.Lock()
				calls = append(calls, call)
				if !ok || end.After(deadline.Add(-margin)) {
					late = append(late, call)
				}
				mu.Unlock()
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
		})
	})
	f := &fixture{&applytest.Fixture{App: "app", Records: "records"}}
	c, err := idempotency.New(db, f.Router(), idempotency.Config{Name: "c", Table: f.Records, CacheSize: -1,
		Retry: idempotency.Retry{Margin: margin}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := applytest.Process(ctx, c, applytest.Message(t, "m", "ev", "test.counted", applytest.Counted{Counter: "x", By: 1}))
	if res.Outcome != idempotency.Failed || err == nil || idempotency.IsPermanent(err) {
		t.Fatalf("Process = %+v, %v; want a transient failure", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 || len(late) > 0 {
		t.Errorf("calls %v; want one commit, given up and not tried again, its deadline Retry.Margin (%v) before the invocation's %v; late: %v", calls, margin, deadline, late)
	}
}
