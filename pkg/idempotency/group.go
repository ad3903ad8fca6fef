package idempotency

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// GroupPolicy says what a Consumer does with the later events of a group (an SQS FIFO message
// group, Delivery.Group) after one of the group's messages was dead-lettered.
type GroupPolicy uint8

const (
	// GoOn applies the later events of the group as they come: the dead-lettered one is
	// applied, if ever, out of order when it is redriven. The default. Right for events
	// whose effects commute (a note's tags).
	GoOn GroupPolicy = iota
	// HoldGroup applies nothing more of the group until the dead-lettered message is applied
	// again: every later message of the group fails permanently with a HeldError naming the
	// message it is held behind, and is dead-lettered after it, in order, so that a redrive
	// of the dead-letter queue replays the group in order. Right for events whose order
	// matters (a balance's movements).
	HoldGroup
)

// ErrHeld is matched by a HeldError.
var ErrHeld = errors.New("group held behind a dead-lettered message")

// HeldError reports an event not applied because its group is held (HoldGroup) behind an
// earlier message that was dead-lettered. It is permanent: the message is dead-lettered after
// the one it is held behind, so that a redrive replays the group in order.
type HeldError struct {
	Group          string
	BlockerEventID string // empty when the blocking message had no usable event id
	BlockerMessage string // the SQS message id of the blocking message
	BlockerReason  string // why the blocking message was dead-lettered
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("group %s held behind event %q (message %s), dead-lettered because: %s; redrive the dead-letter queue in order once the cause is fixed",
		e.Group, e.BlockerEventID, e.BlockerMessage, e.BlockerReason)
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Permanent reports that retrying cannot help until the group is released.
func (e *HeldError) Permanent() bool { return true }

const attrBlocker = "blockerEventId"

// holdKey is the key of a group's hold item. It starts with the key separator, which no
// consumer name contains, so it never collides with a record's key.
func holdKey(consumer, group string) string {
	return keySeparator + "hold" + keySeparator + consumer + keySeparator + group
}

// HoldsGroups reports whether the consumer's policy is HoldGroup.
func (c *core) HoldsGroups() bool { return c.cfg.AfterDeadLetter == HoldGroup }

// HoldGroup holds group behind the message (event eventID, possibly empty, SQS message
// messageID) about to be dead-lettered for reason, when the policy is HoldGroup; it does
// nothing under GoOn, for an empty group, or when the group is held already (the first
// blocker stays). The group is released when the blocking event is applied (after a redrive),
// or when a person deletes the hold item.
func (c *core) HoldGroup(ctx context.Context, group, eventID, messageID string, reason error) error {
	if !c.HoldsGroups() || group == "" {
		return nil
	}
	item, err := attributevalue.MarshalMap(Hold{Key: holdKey(c.cfg.Name, group), Consumer: c.cfg.Name, Group: group,
		BlockerEventID: eventID, BlockerMessage: messageID, BlockerReason: truncate(reason.Error(), 1024),
		HeldAt: rfc3339(c.cfg.Now())})
	if err != nil {
		return fmt.Errorf("encode hold of group %s: %w", group, err)
	}
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	_, err = c.db.PutItem(callCtx, &dynamodb.PutItemInput{TableName: aws.String(c.cfg.Table), Item: item,
		ConditionExpression: aws.String("attribute_not_exists(pk)")})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return fmt.Errorf("hold group %s: %w", group, err)
	}
	return nil
}

// releaseWrite is the write a commit of event eventID of group adds under HoldGroup: it
// deletes the group's hold when this event is its blocker, and fails (held) when another
// event is; with no hold it writes nothing. One more item in the transaction, no round trip.
func (c *core) releaseWrite(group, eventID string) (types.TransactWriteItem, error) {
	cond := expression.Name(attrKey).AttributeNotExists().Or(expression.Name(attrBlocker).Equal(expression.Value(eventID)))
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build hold condition: %w", err)
	}
	return types.TransactWriteItem{Delete: &types.Delete{
		TableName:                           aws.String(c.cfg.Table),
		Key:                                 Record{Key: holdKey(c.cfg.Name, group)}.key(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil
}

// releasedAfter returns what releases rec's group when rec's event is its blocker and turned
// out a duplicate (a last attempt that committed though its answer was lost): the commit that
// would have released it was cancelled. It costs a conditional delete, under HoldGroup only,
// and only for a duplicate found by DynamoDB. A failed release fails the message, so that a
// delivery again retries it.
func (c *core) releasedAfter(ctx context.Context, rec Record) func(Result, error) (Result, error) {
	return func(res Result, err error) (Result, error) {
		if err != nil || res.Outcome != Duplicate || !c.HoldsGroups() || rec.Group == "" {
			return res, err
		}
		expr, err := expression.NewBuilder().WithCondition(
			expression.Name(attrBlocker).Equal(expression.Value(rec.EventID))).Build()
		if err != nil {
			res.Outcome = Failed
			return res, fmt.Errorf("build hold release: %w", err)
		}
		callCtx, cancel := c.cfg.Retry.bound(ctx)
		defer cancel()
		_, err = c.db.DeleteItem(callCtx, &dynamodb.DeleteItemInput{TableName: aws.String(c.cfg.Table),
			Key: Record{Key: holdKey(c.cfg.Name, rec.Group)}.key(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
		var ccf *types.ConditionalCheckFailedException
		if err != nil && !errors.As(err, &ccf) {
			res.Outcome = Failed
			return res, fmt.Errorf("release group %s held behind %s: %w", rec.Group, rec.EventID, err)
		}
		return res, nil
	}
}

// heldError builds the error for a commit refused by its group's hold.
func heldError(group string, old map[string]types.AttributeValue) *HeldError {
	var h Hold
	_ = attributevalue.UnmarshalMap(old, &h)
	return &HeldError{Group: group, BlockerEventID: h.BlockerEventID, BlockerMessage: h.BlockerMessage, BlockerReason: h.BlockerReason}
}

// truncate cuts s to at most n bytes at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
