package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
)

// retried is the engine's one retry layer around every DynamoDB call it makes. A call made
// with Retry.single is one attempt of a loop the engine runs itself (a commit, a claim, a
// completion): it is passed through. Any other call (counting an attempt, writing or
// releasing a hold, whatever a later write adds) is made one attempt at a time, the client's
// own retryer off, and retried here under Retry: at most MaxAttempts attempts, full jitter,
// never past the context's deadline less Margin. Either way no SDK retry runs unseen inside
// an engine call, so the time a failing message takes is bounded by what Retry says.
type retried struct {
	db    DB
	retry Retry
}

func (r retried) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return retriedCall(ctx, r.retry, opts, func(opts []func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
		return r.db.TransactWriteItems(ctx, in, opts...)
	})
}

func (r retried) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return retriedCall(ctx, r.retry, opts, func(opts []func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
		return r.db.PutItem(ctx, in, opts...)
	})
}

func (r retried) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return retriedCall(ctx, r.retry, opts, func(opts []func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
		return r.db.GetItem(ctx, in, opts...)
	})
}

func (r retried) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return retriedCall(ctx, r.retry, opts, func(opts []func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
		return r.db.UpdateItem(ctx, in, opts...)
	})
}

func (r retried) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return retriedCall(ctx, r.retry, opts, func(opts []func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
		return r.db.DeleteItem(ctx, in, opts...)
	})
}

// retriedCall makes call once when opts already make it a single attempt (the caller's own
// loop retries it), else retries it as retried says.
func retriedCall[T any](ctx context.Context, r Retry, opts []func(*dynamodb.Options), call func([]func(*dynamodb.Options)) (T, error)) (T, error) {
	if singleAttempt(opts) {
		return call(opts)
	}
	opts = append(opts[:len(opts):len(opts)], r.single) // last, so it wins
	for attempt := 1; ; attempt++ {
		out, err := call(opts)
		if err == nil || !retryable(err) {
			return out, err
		}
		if !r.wait(ctx, attempt) {
			return out, fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
	}
}

// singleAttempt reports whether opts turn the client's retryer off for the call.
func singleAttempt(opts []func(*dynamodb.Options)) bool {
	var o dynamodb.Options
	for _, f := range opts {
		f(&o)
	}
	_, ok := o.Retryer.(aws.NopRetryer)
	return ok
}

// retryable reports whether another attempt of a single-item call may succeed: what the
// SDK's standard retryer retries (throttling, 5xx, connection errors, timeouts), and the
// transient codes of a commit (a conflicting transaction). A cancelled or expired context, a
// refused condition and a validation error are not.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary {
		return true
	}
	var api smithy.APIError
	return errors.As(err, &api) && transientCodes[api.ErrorCode()]
}
