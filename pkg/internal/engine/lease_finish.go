package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// complete marks the record completed, fenced by this owner's lease, retrying transient
// failures. A refused fence is a LeaseLostError and writes nothing.
func (c *LeasedConsumer) complete(ctx context.Context, res Result, l *lease) (Result, error) {
	now := c.cfg.Now()
	rec := l.rec
	rec.Status, rec.Outcome, rec.ProcessedAt, rec.LeaseExpiresAt = table.StatusCompleted, string(Applied), table.RFC3339(now), 0
	rec.ExpiresAt = now.Add(c.cfg.Retention).Unix()
	update := expression.Set(expression.Name(attrStatus), expression.Value(rec.Status)).
		Set(expression.Name("outcome"), expression.Value(rec.Outcome)).
		Set(expression.Name("processedAt"), expression.Value(rec.ProcessedAt)).
		Set(expression.Name(table.AttrExpiresAt), expression.Value(rec.ExpiresAt)).
		Remove(expression.Name(attrLeaseExpiresAt))
	expr, err := expression.NewBuilder().WithUpdate(update).WithCondition(ownedBy(rec.Owner)).Build()
	if err != nil {
		res.Outcome = Failed
		return res, fmt.Errorf("build completion of %s: %w", rec.Key, err)
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                           aws.String(c.cfg.Table),
		Key:                                 table.ItemKey(rec.Key),
		UpdateExpression:                    expr.Update(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	for attempt := 1; ; attempt++ {
		start := time.Now()
		_, err := c.db.UpdateItem(ctx, in, c.cfg.Retry.single) // ctx is run's finishing context: bounded
		res.Commit += time.Since(start)
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil || errors.As(err, &ccf) && completedBy(ccf.Item, rec.Owner): // the latter: a retry after a lost answer
			res.Outcome = Applied
			c.remember(rec, Applied, "")
			return res, nil
		case errors.As(err, &ccf):
			res.Outcome = Failed
			return res, lostLease(l, "complete", ccf.Item)
		}
		if denied.Is(err) || !c.cfg.Retry.wait(ctx, attempt) {
			res.Outcome = Failed
			return res, fmt.Errorf("complete %s after %d attempts, the effect will run again once the lease expires: %w", rec.Key, attempt, err)
		}
	}
}

func completedBy(item map[string]types.AttributeValue, owner string) bool {
	var r table.Record
	return item != nil && attributevalue.UnmarshalMap(item, &r) == nil && r.Status == table.StatusCompleted && r.Owner == owner
}

// release deletes the record after the effect failed, fenced by owner = this owner, so that
// the next delivery runs the effect at once rather than after the lease.
func (c *LeasedConsumer) release(ctx context.Context, res *Result, l *lease) error {
	cond, err := expression.NewBuilder().
		WithCondition(expression.Name(attrOwner).Equal(expression.Value(l.rec.Owner))).Build()
	if err != nil {
		return fmt.Errorf("build release of %s: %w", l.rec.Key, err)
	}
	in := &dynamodb.DeleteItemInput{
		TableName:                           aws.String(c.cfg.Table),
		Key:                                 table.ItemKey(l.rec.Key),
		ConditionExpression:                 cond.Condition(),
		ExpressionAttributeNames:            cond.Names(),
		ExpressionAttributeValues:           cond.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	for attempt := 1; ; attempt++ {
		start := time.Now()
		_, err := c.db.DeleteItem(ctx, in, c.cfg.Retry.single) // ctx is run's finishing context: bounded
		res.Commit += time.Since(start)
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil || errors.As(err, &ccf) && ccf.Item == nil: // gone: nothing of ours stands
			return nil
		case errors.As(err, &ccf):
			return lostLease(l, "release", ccf.Item)
		}
		if denied.Is(err) || !c.cfg.Retry.wait(ctx, attempt) {
			return fmt.Errorf("release %s after %d attempts, it stays held until its lease expires: %w", l.rec.Key, attempt, err)
		}
	}
}

// hold returns the context the effect runs in, and a stop function to call when it returns.
// Without a heartbeat the context ends when the lease runs out; with one, the lease is
// extended while the effect runs, and the context is cancelled with a LeaseLostError when an
// extension is refused. stop returns that error, if any.
func (c *LeasedConsumer) hold(ctx context.Context, l *lease) (context.Context, func() error) {
	// The effect stops Retry.Margin before the invocation's deadline, leaving time to
	// complete or release the record and report the message before Lambda times out.
	inTime, cancelInTime := c.cfg.Retry.bound(ctx)
	effectCtx, cancelCause := context.WithCancelCause(inTime)
	cancel := func(cause error) { cancelCause(cause); cancelInTime() }
	if c.lease.Heartbeat <= 0 {
		bounded, cancelBound := deadlineOn(effectCtx, c.lease.Clock, l.until)
		return bounded, func() error { cancelBound(); cancel(nil); return nil }
	}
	armed, done, stopped := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		c.heartbeat(effectCtx, cancel, l, armed, done)
	}()
	<-armed // the lease's clock runs for the heartbeat before the effect does
	return effectCtx, func() error {
		close(done)
		<-stopped
		cause := context.Cause(effectCtx)
		cancel(nil)
		if errors.Is(cause, ErrLeaseLost) {
			return cause
		}
		return nil
	}
}

// heartbeat extends the lease every Heartbeat until done is closed, and cancels the effect
// when the lease is lost: refused, or run out (at the instant it does, on this clock) while
// extensions kept failing or hanging. Each extension is given up by the time the lease runs
// out, so a hung call never keeps the effect running past it. armed is closed once the
// heartbeat and the lease's end are timed.
func (c *LeasedConsumer) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, l *lease, armed chan<- struct{}, done <-chan struct{}) {
	beats, stopBeats := ticks(c.lease.Clock, c.lease.Heartbeat)
	defer stopBeats()
	var mu sync.Mutex // guards lastErr, read when the lease runs out
	var lastErr error
	// The lease ends here unless extended. The timer runs on its own goroutine, so an
	// extension in flight (hung until its own timeout) never delays the effect's end.
	runOut := func() {
		mu.Lock()
		defer mu.Unlock()
		if lastErr == nil { // the lease ran out before any extension answered
			cancel(fmt.Errorf("lease of %s ran out before its heartbeat extended it: %w", l.rec.Key, ErrLeaseLost))
			return
		}
		cancel(fmt.Errorf("lease of %s ran out while its heartbeat failed: %w: %w", l.rec.Key, ErrLeaseLost, lastErr))
	}
	expiry := c.lease.Clock.AfterFunc(c.untilStop(l), runOut)
	defer func() { expiry.Stop() }()
	close(armed)
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-beats:
		}
		err := c.extend(ctx, l)
		var lost *LeaseLostError
		switch {
		case err == nil:
			if !expiry.Stop() {
				return // the lease ran out before the extension answered: the effect is cancelled
			}
			expiry = c.lease.Clock.AfterFunc(c.untilStop(l), runOut)
		case errors.As(err, &lost):
			cancel(lost)
			return
		default:
			mu.Lock()
			lastErr = err
			mu.Unlock()
			c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "lease heartbeat failed, retrying",
				slog.String("consumer", c.cfg.Name), slog.String("idempotency_key", l.rec.Key), slog.String("error", err.Error()))
		}
	}
}

// untilStop is how long the effect may still run under lease l with a heartbeat: until a
// quarter of a heartbeat (at most a second) before the lease runs out, a margin for a
// scheduling pause of this process and clock skew with the next owner's host.
func (c *LeasedConsumer) untilStop(l *lease) time.Duration {
	return l.until.Sub(c.lease.Clock.Now()) - min(c.lease.Heartbeat/4, time.Second)
}

// extend moves the lease's expiry to a lease length from now, fenced by this owner.
func (c *LeasedConsumer) extend(ctx context.Context, l *lease) error {
	start, length := c.lease.Clock.Now(), c.leaseLength(ctx)
	expr, err := expression.NewBuilder().
		WithUpdate(expression.Set(expression.Name(attrLeaseExpiresAt), expression.Value(c.cfg.Now().Add(length).UnixMilli()))).
		WithCondition(ownedBy(l.rec.Owner)).Build()
	if err != nil {
		return fmt.Errorf("build lease extension of %s: %w", l.rec.Key, err)
	}
	callCtx, cancel := deadlineOn(ctx, c.lease.Clock, start.Add(min(l.until.Sub(start), c.lease.Heartbeat)))
	defer cancel()
	_, err = c.db.UpdateItem(callCtx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(c.cfg.Table),
		Key:                                 table.ItemKey(l.rec.Key),
		UpdateExpression:                    expr.Update(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, c.cfg.Retry.single) // one attempt per beat: the next beat is the retry
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return lostLease(l, "heartbeat", ccf.Item)
	case err != nil:
		return fmt.Errorf("extend lease of %s: %w", l.rec.Key, err)
	}
	l.until = start.Add(length)
	return nil
}
