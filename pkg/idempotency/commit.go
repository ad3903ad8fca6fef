package idempotency

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func (r Record) key() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrKey: &types.AttributeValueMemberS{Value: r.Key}}
}

// absentCondition is true when no live record exists: none at all, or one whose expiry has
// passed but which TTL has not deleted yet. Behaviour never depends on when TTL runs.
func absentCondition(now time.Time) (expression.Expression, error) {
	cond := expression.Name(attrKey).AttributeNotExists().
		Or(expression.Name(attrExpiresAt).LessThan(expression.Value(now.Unix())))
	return expression.NewBuilder().WithCondition(cond).Build()
}

// commit writes the effect and the record in one transaction and classifies the answer,
// retrying transient failures within the deadline.
func (c *Consumer) commit(ctx context.Context, res Result, items []types.TransactWriteItem, effect Effect, rec Record) (Result, error) {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		res.Outcome = Failed
		return res, fmt.Errorf("encode record %s: %w", rec.Key, err)
	}
	cond, err := absentCondition(c.cfg.Now())
	if err != nil {
		res.Outcome = Failed
		return res, fmt.Errorf("build record condition: %w", err)
	}
	recordIndex := len(items)
	items = append(items, types.TransactWriteItem{Put: &types.Put{
		TableName:                           aws.String(c.cfg.Table),
		Item:                                item,
		ConditionExpression:                 cond.Condition(),
		ExpressionAttributeNames:            cond.Names(),
		ExpressionAttributeValues:           cond.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}})
	heldIndex := -1
	if c.HoldsGroups() && rec.Group != "" {
		if len(items) > MaxEffectWrites { // the effect's writes, the record and the hold
			res.Outcome = Failed
			return res, &EffectError{EventType: rec.EventType, Problem: fmt.Sprintf(
				"%d writes; under HoldGroup one transaction takes at most %d besides the idempotency record and the group's hold",
				len(items)-1, MaxEffectWrites-1)}
		}
		release, err := c.releaseWrite(rec.Group, rec.EventID)
		if err != nil {
			res.Outcome = Failed
			return res, err
		}
		heldIndex, items = len(items), append(items, release)
	}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: items}

	for attempt := 1; ; attempt++ {
		start := time.Now()
		callCtx, cancel := c.cfg.Retry.bound(ctx)
		_, err := c.db.TransactWriteItems(callCtx, in)
		cancel()
		res.Commit += time.Since(start)
		v := classify(err, recordIndex, heldIndex)
		switch v.kind {
		case committed:
			res.Outcome = Applied
			c.remember(rec, Applied, "")
			return res, nil
		case recordExists:
			return c.releasedAfter(ctx, rec)(c.existing(ctx, res, v.old, rec.PayloadHash))
		case held:
			res.Outcome = Failed
			return res, heldError(rec.Group, v.old)
		case effectFailed:
			if effect.provesDuplicate(v.failed) {
				return c.releasedAfter(ctx, rec)(duplicateByEffect(res), nil)
			}
			reason := effect[v.index].Reason()
			if reason == "" {
				reason = fmt.Sprintf("condition of write %d failed", v.index)
			}
			var done bool
			res, done, err = c.reject(ctx, res, rec, reason, cond, effect[v.index].onReject)
			if done {
				return res, err
			}
		case permanent:
			res.Outcome = Failed
			return res, &EffectError{EventType: rec.EventType, Problem: "DynamoDB refused the transaction: " + err.Error()}
		}
		if !c.cfg.Retry.wait(ctx, attempt) {
			res.Outcome = Failed
			return res, fmt.Errorf("commit %s after %d attempts: %w", rec.Key, attempt, err)
		}
	}
}

// reject records a rejection in its own conditional Put (with the failed write's OnReject
// writes, if any, in one transaction), so that a redelivery gets the same answer. done is
// false when the Put failed transiently and the commit should be retried.
func (c *Consumer) reject(ctx context.Context, res Result, rec Record, reason string, cond expression.Expression, also Effect) (Result, bool, error) {
	rec.Outcome, rec.Reason = string(Rejected), reason
	if len(also) > 0 || c.HoldsGroups() && rec.Group != "" { // the hold's release joins the rejection
		return c.rejectWith(ctx, res, rec, cond, also)
	}
	if len(also) > 0 {
		return c.rejectWith(ctx, res, rec, cond, also)
	}
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		res.Outcome = Failed
		return res, true, fmt.Errorf("encode record %s: %w", rec.Key, err)
	}
	start := time.Now()
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	_, err = c.db.PutItem(callCtx, &dynamodb.PutItemInput{
		TableName:                           aws.String(c.cfg.Table),
		Item:                                item,
		ConditionExpression:                 cond.Condition(),
		ExpressionAttributeNames:            cond.Names(),
		ExpressionAttributeValues:           cond.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	res.Commit += time.Since(start)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		res.Outcome, res.Reason = Rejected, reason
		c.remember(rec, Rejected, reason)
		return res, true, nil
	case errors.As(err, &ccf):
		res, err = c.existing(ctx, res, ccf.Item, rec.PayloadHash)
		return res, true, err
	default:
		return res, false, fmt.Errorf("record rejection of %s: %w", rec.Key, err)
	}
}
