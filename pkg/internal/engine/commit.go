package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// prepared is one event ready to commit: its effect's items followed by the record's
// conditional Put and, under HoldGroup, the release of the group's hold.
type prepared struct {
	res         Result
	items       []types.TransactWriteItem
	effect      Effect
	rec         table.Record
	cond        expression.Expression // the record's condition: no live record
	recordIndex int                   // of the record's Put in items
	heldIndex   int                   // of the hold's release in items, or -1
	passing     bool                  // items[heldIndex] is passHold's write, not the plain release check
	checks      []readCheck           // where the items check what the handler read
}

// withRecord appends the record's conditional Put to the effect's items, and under HoldGroup
// the release of the group's hold.
func (c *Consumer) withRecord(res Result, items []types.TransactWriteItem, effect Effect, rec table.Record) (prepared, error) {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return prepared{}, fmt.Errorf("encode record %s: %w", rec.Key, err)
	}
	cond, err := table.AbsentCondition(c.cfg.Now())
	if err != nil {
		return prepared{}, fmt.Errorf("build record condition: %w", err)
	}
	items = append(items, types.TransactWriteItem{Put: &types.Put{
		TableName:                           aws.String(c.cfg.Table),
		Item:                                item,
		ConditionExpression:                 cond.Condition(),
		ExpressionAttributeNames:            cond.Names(),
		ExpressionAttributeValues:           cond.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}})
	p := prepared{res: res, effect: effect, rec: rec, cond: cond, recordIndex: len(items) - 1, heldIndex: -1}
	if c.HoldsGroups() && rec.Group != "" {
		if len(items) > MaxEffectWrites { // the effect's writes, the record and the hold
			return prepared{}, &EffectError{EventType: rec.EventType, Problem: fmt.Sprintf(
				"%d writes; under HoldGroup one transaction takes at most %d besides the idempotency record and the group's hold",
				len(items)-1, MaxEffectWrites-1)}
		}
		p.heldIndex, items = len(items), append(items, c.releaseWrite(rec.Group))
	}
	p.items = items
	return p, nil
}

// commit writes the effect and the record in one transaction and classifies the answer,
// retrying transient failures within the deadline.
func (c *Consumer) commit(ctx context.Context, p prepared) (Result, error) {
	in := &dynamodb.TransactWriteItemsInput{TransactItems: p.items}
	res := p.res
	for attempt := 1; ; attempt++ {
		start := time.Now()
		callCtx, cancel := c.cfg.Retry.bound(ctx)
		_, err := c.db.TransactWriteItems(callCtx, in, c.cfg.Retry.single)
		cancel()
		res.Commit += time.Since(start)
		p.res = res
		var done bool
		res, done, err = c.settle(ctx, p, classify(err, p.recordIndex, p.heldIndex), err)
		if done {
			return res, err
		}
		if !c.cfg.Retry.wait(ctx, attempt) {
			res.Outcome = Failed
			return res, fmt.Errorf("commit %s after %d attempts: %w", p.rec.Key, attempt, err)
		}
	}
}

// settle turns one event's verdict into its result; done is false when the commit should be
// retried (err then says why).
func (c *Consumer) settle(ctx context.Context, p prepared, v verdict, err error) (Result, bool, error) {
	res := p.res
	if p.passing { // passHold's write passing is no sign that the group is not held
		v.holdFree = false
	}
	switch v.kind {
	case committed:
		res.Outcome = Applied
		c.remember(p.rec, Applied, "")
		return res, true, nil
	case recordExists:
		res, err = c.releasedAfter(ctx, p.rec, v)(c.existing(ctx, res, v.old, p.rec.PayloadHash))
		return res, true, err
	case held:
		return c.throughHold(ctx, p, v.old)
	case effectFailed:
		if err := p.changed(v); err != nil { // decided on what is no more: decide again
			res.Outcome = Failed
			return res, true, err
		}
		if p.effect.provesDuplicate(v.failed) {
			res, err = c.releasedAfter(ctx, p.rec, v)(duplicateByEffect(res), nil)
			return res, true, err
		}
		reason := p.effect[v.index].Reason
		if reason == "" {
			reason = fmt.Sprintf("condition of write %d failed", v.index)
		}
		return c.reject(ctx, res, p.rec, reason, p.cond, p.effect[v.index].OnReject)
	case permanent:
		res.Outcome = Failed
		return res, true, &EffectError{EventType: p.rec.EventType, Problem: "DynamoDB refused the transaction: " + err.Error()}
	case refusedAccess: // another attempt is denied too: the message is delivered again once granted
		res.Outcome = Failed
		return res, true, fmt.Errorf("commit %s: %w", p.rec.Key, err)
	}
	return res, false, err
}

// reject records a rejection in its own conditional Put (with the failed write's OnReject
// writes, if any, in one transaction), so that a redelivery gets the same answer. done is
// false when the Put failed transiently and the commit should be retried.
func (c *Consumer) reject(ctx context.Context, res Result, rec table.Record, reason string, cond expression.Expression, also Effect) (Result, bool, error) {
	rec.Outcome, rec.Reason = string(Rejected), reason
	if len(also) > 0 || c.HoldsGroups() && rec.Group != "" { // the hold's release joins the rejection
		return c.rejectWith(ctx, res, rec, cond, also, nil)
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
	}, c.cfg.Retry.single)
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
	default: // a denial is not retried: another attempt is denied too
		res.Outcome = Failed
		return res, denied.Is(err), fmt.Errorf("record rejection of %s: %w", rec.Key, err)
	}
}

// throughHold settles a commit that the group's hold (old, as the cancellation returned it)
// refused: the head of the held list is committed again with the write that takes it off the
// hold, in the same transaction as its effect; any other event of the group is held (it joins
// the end of the list) and fails with a HeldError, to be dead-lettered after the others. Only
// this recovery path pays round trips beyond the one transaction.
func (c *Consumer) throughHold(ctx context.Context, p prepared, old map[string]types.AttributeValue) (Result, bool, error) {
	w, err := c.passHold(ctx, p.rec, old)
	var de *DecidedError
	if errors.As(err, &de) { // decided since its commit was refused: a duplicate, off the list
		res, err := c.releasedAfter(ctx, p.rec, verdict{})(c.existing(ctx, p.res, de.record, p.rec.PayloadHash))
		return res, true, err
	}
	if err != nil {
		res := p.res
		res.Outcome = Failed
		return res, true, err
	}
	p.items = slices.Clone(p.items)
	p.items[p.heldIndex], p.passing = w, true
	res, err := c.commit(ctx, p)
	return res, true, err
}
