package testenv

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/smithy-go/middleware"
)

// Requests counts the API requests a client sends, retries included.
type Requests struct {
	n   atomic.Int64
	ops sync.Map // operation name -> *atomic.Int64
}

// Total returns the number of requests sent so far.
func (r *Requests) Total() int64 { return r.n.Load() }

// Of returns the number of requests of one operation ("TransactWriteItems").
func (r *Requests) Of(op string) int64 {
	if v, ok := r.ops.Load(op); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// Writes returns the number of DynamoDB write requests sent (TransactWriteItems, PutItem,
// UpdateItem, DeleteItem, BatchWriteItem).
func (r *Requests) Writes() int64 {
	return r.Of("TransactWriteItems") + r.Of("PutItem") + r.Of("UpdateItem") + r.Of("DeleteItem") + r.Of("BatchWriteItem")
}

// Middleware installs the counter on a client's stack: dynamodb.WithAPIOptions(r.Middleware).
func (r *Requests) Middleware(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("CountRequests",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			r.n.Add(1)
			op := middleware.GetOperationName(ctx)
			v, _ := r.ops.LoadOrStore(op, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}

// String lists the counts, for failure messages.
func (r *Requests) String() string {
	var b strings.Builder
	r.ops.Range(func(k, v any) bool {
		fmt.Fprintf(&b, "%s=%d ", k, v.(*atomic.Int64).Load())
		return true
	})
	return strings.TrimSpace(b.String())
}
