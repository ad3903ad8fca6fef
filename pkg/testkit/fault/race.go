package fault

import (
	"context"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// RaceCommits is client middleware (for dynamodb.WithAPIOptions) that calls race before each of
// the first n TransactWriteItems requests the client sends, with the request: a concurrent
// writer that changes an item between a handler's read and the engine's commit. Race writes
// through a client of its own; its error fails the request.
func RaceCommits(n int64, race func(ctx context.Context, in *dynamodb.TransactWriteItemsInput) error) func(*middleware.Stack) error {
	var raced atomic.Int64
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("RaceCommits",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && raced.Add(1) <= n {
					if err := race(ctx, tx); err != nil {
						return middleware.InitializeOutput{}, middleware.Metadata{}, err
					}
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	}
}
