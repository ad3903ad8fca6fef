package fault

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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

// ThrottleFirstWrites is ThrottleFirst for the DynamoDB requests that write an item whose key
// starts with prefix (a PutItem, UpdateItem or DeleteItem of it, or a TransactWriteItems with
// such a write): "#hold#" throttles the writes of groups' holds, "#attempts#" the counts of
// failed attempts, whatever call carries them.
func ThrottleFirstWrites(prefix string, n int64, attempts *atomic.Int64) func(*middleware.Stack) error {
	type writesKey struct{}
	return func(s *middleware.Stack) error {
		err := s.Initialize.Add(middleware.InitializeMiddlewareFunc("ThrottleWritesOf",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				return next.HandleInitialize(middleware.WithStackValue(ctx, writesKey{}, Writes(in.Parameters, prefix)), in)
			}), middleware.Before)
		if err != nil {
			return err
		}
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("ThrottleWrites",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if w, _ := middleware.GetStackValue(ctx, writesKey{}).(bool); w && attempts.Add(1) <= n {
					return middleware.FinalizeOutput{}, middleware.Metadata{},
						&smithy.GenericAPIError{Code: "ThrottlingException", Message: "injected: rate of requests exceeds the allowed throughput"}
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	}
}

// Writes reports whether a DynamoDB request (the Parameters an SDK middleware sees) writes an
// item whose pk starts with prefix: a PutItem, UpdateItem or DeleteItem of it, or a
// TransactWriteItems with such a write. "#hold#" is a group's hold, "#attempts#" a count.
func Writes(params any, prefix string) bool {
	var keys []map[string]types.AttributeValue
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		keys = append(keys, in.Item)
	case *dynamodb.UpdateItemInput:
		keys = append(keys, in.Key)
	case *dynamodb.DeleteItemInput:
		keys = append(keys, in.Key)
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				keys = append(keys, it.Put.Item)
			case it.Update != nil:
				keys = append(keys, it.Update.Key)
			case it.Delete != nil:
				keys = append(keys, it.Delete.Key)
			}
		}
	}
	for _, k := range keys {
		if pk, ok := k["pk"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(pk.Value, prefix) {
			return true
		}
	}
	return false
}
