package testenv

import (
	"context"
	"sync/atomic"

	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// ThrottleFirst is client middleware (for dynamodb.WithAPIOptions) that answers the first n
// attempts of operation op with ThrottlingException, as DynamoDB does, below the SDK's
// retryer: every attempt of op the client makes is counted in attempts.
func ThrottleFirst(op string, n int64, attempts *atomic.Int64) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("Throttle",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if middleware.GetOperationName(ctx) == op && attempts.Add(1) <= n {
					return middleware.FinalizeOutput{}, middleware.Metadata{},
						&smithy.GenericAPIError{Code: "ThrottlingException", Message: "injected: rate of requests exceeds the allowed throughput"}
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	}
}
