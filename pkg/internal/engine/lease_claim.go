package engine

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/metrics"
)

// Attribute names of lease records used in conditions and updates.
const (
	attrStatus         = "status"
	attrOwner          = "owner"
	attrLeaseExpiresAt = "leaseExpiresAt"
	attrPayloadHash    = "payloadHash"
)

// lease is a claim this delivery holds on a record.
type lease struct {
	rec   table.Record // the in-progress record as claimed; rec.Owner is this owner's token
	until time.Time    // local clock: when the lease runs out unless extended
}

// acquire claims the record, retrying transient failures and, for up to WaitForCompletion,
// polling while another owner holds a live lease. It returns a nil lease when the delivery
// ends here: a duplicate, a conflict, a held lease or a failure.
func (c *LeasedConsumer) acquire(ctx context.Context, res Result, rec table.Record) (*lease, Result, error) {
	waitUntil := time.Now().Add(c.lease.WaitForCompletion)
	// One owner token for every retry of this claim: a claim that committed but whose answer
	// was lost finds its own lease on the retry, and takes it again.
	rec.Owner = crand.Text()
	for attempt := 1; ; {
		l, old, err := c.claim(ctx, &res, rec)
		switch {
		case l != nil:
			return l, res, nil
		case err != nil:
			if denied.Is(err) || !c.cfg.Retry.wait(ctx, attempt) {
				res.Outcome = Failed
				return nil, res, fmt.Errorf("claim %s after %d attempts: %w", rec.Key, attempt, err)
			}
			attempt++
			continue
		}
		var stored table.Record
		if err := attributevalue.UnmarshalMap(old, &stored); err != nil {
			res.Outcome = Failed
			return nil, res, fmt.Errorf("decode record %s: %w", rec.Key, err)
		}
		if stored.Status != table.StatusInProgress || stored.PayloadHash != rec.PayloadHash {
			res, err = c.existing(ctx, res, old, rec.PayloadHash) // duplicate or conflict
			return nil, res, err
		}
		if !poll(ctx, waitUntil) {
			res.Outcome = Failed
			return nil, res, &LeaseHeldError{Key: rec.Key, Holder: stored.Owner, Until: time.UnixMilli(stored.LeaseExpiresAt)}
		}
	}
}

// poll sleeps a moment before looking at a held record again, and reports false when the
// wait for completion is over.
func poll(ctx context.Context, until time.Time) bool {
	delay := 50*time.Millisecond + rand.N(100*time.Millisecond)
	if time.Now().Add(delay).After(until) {
		return false
	}
	return sleep(ctx, delay)
}

// claim puts an in-progress record owned by a new random token, if no live record exists or
// the previous owner's lease on this same event has expired (a take-over). It returns the
// lease; or the record that stands in the way; or an error, to be retried.
func (c *LeasedConsumer) claim(ctx context.Context, res *Result, rec table.Record) (*lease, map[string]types.AttributeValue, error) {
	start, began := c.lease.Clock.Now(), time.Now() // before the lease's stored start: the local lease never outlasts it
	now := c.cfg.Now()
	length := c.leaseLength(ctx)
	rec.Status, rec.Outcome = table.StatusInProgress, ""
	rec.ProcessedAt = table.RFC3339(now)
	rec.LeaseExpiresAt = now.Add(length).UnixMilli()
	rec.ExpiresAt = now.Add(max(c.cfg.Retention, length)).Unix()
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return nil, nil, fmt.Errorf("encode record %s: %w", rec.Key, err)
	}
	cond, err := expression.NewBuilder().WithCondition(claimCondition(now, rec.Owner, rec.PayloadHash)).Build()
	if err != nil {
		return nil, nil, fmt.Errorf("build claim condition: %w", err)
	}
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	out, err := c.db.PutItem(callCtx, &dynamodb.PutItemInput{
		TableName:                           aws.String(c.cfg.Table),
		Item:                                item,
		ConditionExpression:                 cond.Condition(),
		ExpressionAttributeNames:            cond.Names(),
		ExpressionAttributeValues:           cond.Values(),
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}, c.cfg.Retry.single) // acquire's loop is the only retry
	res.Commit += time.Since(began)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		c.takenOver(ctx, rec, out.Attributes, now)
		return &lease{rec: rec, until: start.Add(length)}, nil, nil
	case errors.As(err, &ccf) && ccf.Item != nil:
		return nil, ccf.Item, nil
	case errors.As(err, &ccf): // ALL_OLD not honoured: read the record (consistently) instead
		old, err := c.read(ctx, res, rec.Key)
		if err != nil || old == nil {
			return nil, nil, errors.Join(fmt.Errorf("claim %s: the record changed, try again", rec.Key), err)
		}
		return nil, old, nil
	default:
		return nil, nil, fmt.Errorf("claim %s: %w", rec.Key, err)
	}
}

// claimCondition: no record; or an expired one (TTL deletes late); or an in-progress record
// of the same event whose lease ran out, or which this owner claimed already (a retry after
// a lost answer): the same event is the same payload hash.
func claimCondition(now time.Time, owner, hash string) expression.ConditionBuilder {
	inProgress := expression.Name(attrStatus).Equal(expression.Value(table.StatusInProgress)).
		And(expression.Name(attrPayloadHash).Equal(expression.Value(hash)))
	return expression.Name(table.AttrKey).AttributeNotExists().Or(
		expression.Name(table.AttrExpiresAt).LessThan(expression.Value(now.Unix())),
		inProgress.And(expression.Name(attrLeaseExpiresAt).LessThan(expression.Value(now.UnixMilli()))),
		inProgress.And(expression.Name(attrOwner).Equal(expression.Value(owner))))
}

// takenOver logs and counts a claim that replaced another owner's expired lease.
func (c *LeasedConsumer) takenOver(ctx context.Context, rec table.Record, oldItem map[string]types.AttributeValue, now time.Time) {
	var old table.Record
	if len(oldItem) == 0 || attributevalue.UnmarshalMap(oldItem, &old) != nil ||
		old.Status != table.StatusInProgress || old.ExpiresAt < now.Unix() {
		return
	}
	c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "lease taken over",
		slog.String("consumer", c.cfg.Name),
		slog.String("idempotency_key", rec.Key),
		slog.String("messageId", rec.MessageID),
		slog.String("previousOwner", old.Owner),
		slog.String("previousLeaseExpiredAt", table.RFC3339(time.UnixMilli(old.LeaseExpiresAt))),
		slog.String("owner", rec.Owner))
	c.cfg.Metrics.Count(metrics.LeaseTakeover, 1)
}

// leaseLength is Config.Lease, or the invocation's remaining time plus the margin.
func (c *LeasedConsumer) leaseLength(ctx context.Context) time.Duration {
	if c.lease.Lease > 0 {
		return c.lease.Lease
	}
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), 0) + c.lease.LeaseMargin
	}
	return MaxLease
}

// ownedBy is the fence of every write after the claim: this owner still holds the lease.
func ownedBy(owner string) expression.ConditionBuilder {
	return expression.Name(attrOwner).Equal(expression.Value(owner)).
		And(expression.Name(attrStatus).Equal(expression.Value(table.StatusInProgress)))
}

// lostLease builds the error for a fenced write refused; old is the record as it stands.
func lostLease(l *lease, op string, old map[string]types.AttributeValue) *LeaseLostError {
	var cur table.Record
	_ = attributevalue.UnmarshalMap(old, &cur)
	return &LeaseLostError{Key: l.rec.Key, Owner: l.rec.Owner, Holder: cur.Owner, Op: op}
}
