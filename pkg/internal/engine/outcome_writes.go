package engine

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

	"github.com/onceflow/onceflow/pkg/internal/table"
)

// provesDuplicate reports whether a write among failed (indexes into e) is marked OrDuplicate.
func (e Effect) provesDuplicate(failed []int) bool {
	for _, i := range failed {
		if i < len(e) && e[i].Duplicate {
			return true
		}
	}
	return false
}

func duplicateByEffect(res Result) Result {
	res.Outcome, res.Stored, res.Reason = Duplicate, "", ""
	return res
}

// checkRejections checks every write's OnReject writes as an effect of their own.
func (e Effect) checkRejections(eventType string, record itemRef) error {
	for i, w := range e {
		if len(w.OnReject) == 0 {
			continue
		}
		for _, r := range w.OnReject {
			if len(r.OnReject) > 0 {
				return &EffectError{EventType: eventType, Problem: fmt.Sprintf("write %d: OnReject of an OnReject write", i)}
			}
		}
		if _, err := w.OnReject.build(eventType, record); err != nil {
			var ee *EffectError
			if errors.As(err, &ee) {
				ee.Problem = fmt.Sprintf("write %d, OnReject: %s", i, ee.Problem)
			}
			return err
		}
	}
	return nil
}

// rejectWith commits the rejection record rec together with the writes also and, under
// HoldGroup, hold (nil: the check that the group is not held).
func (c *Consumer) rejectWith(ctx context.Context, res Result, rec table.Record, cond expression.Expression, also Effect, hold *types.TransactWriteItem) (Result, bool, error) {
	record, err := attributevalue.MarshalMap(rec)
	if err != nil {
		res.Outcome = Failed
		return res, true, fmt.Errorf("encode record %s: %w", rec.Key, err)
	}
	items, err := also.build(rec.EventType, itemRef{c.cfg.Table, canonicalKey(table.ItemKey(rec.Key))})
	if err != nil { // checked with the effect already
		res.Outcome = Failed
		return res, true, err
	}
	recordIndex := len(items)
	items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(c.cfg.Table), Item: record,
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(),
		ExpressionAttributeValues:           cond.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}})
	heldIndex := -1
	if c.HoldsGroups() && rec.Group != "" {
		release := c.releaseWrite(rec.Group)
		if hold != nil {
			release = *hold
		}
		heldIndex, items = len(items), append(items, release)
	}
	start := time.Now()
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	_, err = c.db.TransactWriteItems(callCtx, &dynamodb.TransactWriteItemsInput{TransactItems: items}, c.cfg.Retry.single)
	res.Commit += time.Since(start)
	v := classify(err, recordIndex, heldIndex)
	if hold != nil { // passHold's write passing is no sign that the group is not held
		v.holdFree = false
	}
	switch v.kind {
	case committed:
		res.Outcome, res.Reason = Rejected, rec.Reason
		c.remember(rec, Rejected, rec.Reason)
		return res, true, nil
	case recordExists:
		res, err = c.releasedAfter(ctx, rec, v)(c.existing(ctx, res, v.old, rec.PayloadHash))
		return res, true, err
	case held:
		w, err := c.passHold(ctx, rec, v.old)
		var de *DecidedError
		if errors.As(err, &de) { // decided meanwhile: a duplicate, off the list
			res, err = c.releasedAfter(ctx, rec, verdict{})(c.existing(ctx, res, de.record, rec.PayloadHash))
			return res, true, err
		}
		if err != nil {
			res.Outcome = Failed
			return res, true, err
		}
		return c.rejectWith(ctx, res, rec, cond, also, &w)
	case effectFailed:
		if also.provesDuplicate(v.failed) {
			res, err = c.releasedAfter(ctx, rec, v)(duplicateByEffect(res), nil)
			return res, true, err
		}
		res.Outcome = Failed
		return res, true, &EffectError{EventType: rec.EventType, Problem: fmt.Sprintf("the condition of OnReject write %d failed", v.index)}
	case permanent:
		res.Outcome = Failed
		return res, true, &EffectError{EventType: rec.EventType, Problem: "DynamoDB refused the rejection: " + err.Error()}
	case refusedAccess:
		res.Outcome = Failed
		return res, true, fmt.Errorf("record rejection of %s: %w", rec.Key, err)
	default:
		return res, false, fmt.Errorf("record rejection of %s: %w", rec.Key, err)
	}
}
