package testenv

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/internal/localaws"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// Name returns a name unique in this test process and across runs, for tables and queues: testkit.Name.
func Name(prefix string) string { return testkit.Name(prefix) }

func endpoint(tb testing.TB, name string) string {
	tb.Helper()
	return testkit.Emulator(tb, name)
}

// Config returns SDK configuration for the local emulators: the local cloud's identity
// (localaws.Config), so that tests and locally run functions see one DynamoDB Local
// database. Clients built from it need a BaseEndpoint.
func Config() aws.Config { return localaws.Config() }

// DynamoDB returns a client for DynamoDB Local at $DYNAMODB_ENDPOINT; opts adjust it.
func DynamoDB(tb testing.TB, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	url := endpoint(tb, testkit.EndpointVariable)
	return dynamodb.NewFromConfig(Config(), append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(url)
	}}, opts...)...)
}

// SQS returns a client for the fauxqs emulator at $SQS_ENDPOINT.
func SQS(tb testing.TB, opts ...func(*sqs.Options)) *sqs.Client {
	url := endpoint(tb, testkit.SQSEndpointVariable)
	return sqs.NewFromConfig(Config(), append([]func(*sqs.Options){func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(url)
	}}, opts...)...)
}

// CreateTable creates an on-demand table with string keys pk and, if withSort, sk, waits
// until it is active and deletes it when the test ends. It returns the table's name.
func CreateTable(tb testing.TB, db *dynamodb.Client, prefix string, withSort bool) string {
	tb.Helper()
	if withSort {
		return CreateTableKeyed(tb, db, prefix, "pk", "sk")
	}
	return CreateTableKeyed(tb, db, prefix, "pk")
}

// CreateTableKeyed creates an on-demand table whose string key is hash (and range, if given),
// waits until it is active and deletes it when the test ends (testkit.Table). It returns the
// table's name.
func CreateTableKeyed(tb testing.TB, db *dynamodb.Client, prefix, hash string, rangeKey ...string) string {
	tb.Helper()
	return testkit.Table(tb, db, prefix, hash, rangeKey...)
}

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
