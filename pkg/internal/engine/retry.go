package engine

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"context"
	"math/rand/v2"
	"time"
)

// Retry is the backoff for transient commit failures: full jitter, exponential from BaseDelay
// up to MaxDelay, at most MaxAttempts attempts, and never past the context's deadline less
// Margin (so the message can still be reported failed in time).
type Retry struct {
	MaxAttempts int           // default 8
	BaseDelay   time.Duration // default 25ms
	MaxDelay    time.Duration // default 1s
	Margin      time.Duration // default 500ms
}

func (r Retry) withDefaults() Retry {
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = 8
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = 25 * time.Millisecond
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = time.Second
	}
	if r.Margin <= 0 {
		r.Margin = 500 * time.Millisecond
	}
	return r
}

// wait sleeps before attempt number attempt (1 is the first retry) and reports whether
// another attempt may be made.
func (r Retry) wait(ctx context.Context, attempt int) bool {
	if attempt >= r.MaxAttempts {
		return false
	}
	ceiling := r.BaseDelay << min(attempt-1, 20)
	if ceiling > r.MaxDelay || ceiling <= 0 {
		ceiling = r.MaxDelay
	}
	delay := rand.N(ceiling) + time.Millisecond
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline)-delay < r.Margin {
		return false
	}
	return sleep(ctx, delay)
}

// sleep waits for d and reports true, or false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// bound returns a context for one DynamoDB call that ends Margin before ctx's deadline, so a
// hung request still leaves time to report the message failed before the invocation ends.
func (r Retry) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, deadline.Add(-r.Margin))
	}
	return context.WithCancel(ctx)
}

// single makes one DynamoDB call exactly one attempt, whatever retryer the client was built
// with: the engine's Retry is then the only retry around its calls, so every attempt is
// bounded by the deadline and counted against MaxAttempts (the SDK's default retryer would
// otherwise make up to 3 attempts of each, with a backoff the engine neither sees nor bounds).
func (Retry) single(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} }
