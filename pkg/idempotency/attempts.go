package idempotency

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute names of the attempts item besides Attempts' own.
const (
	attrAttempts        = "attempts"        // every failure counted for the event, whatever its message
	attrMessageID       = "messageId"       // the SQS message whose failures messageAttempts counts
	attrMessageAttempts = "messageAttempts" // failures of that message
)

// attemptsKey is the key of the item counting an event's failed attempts for a consumer. It
// starts with the key separator, which no consumer name contains, so it never collides with a
// record's key, and the record's conditional write never sees it.
func attemptsKey(consumer, eventID string) string {
	return keySeparator + "attempts" + keySeparator + Key(consumer, eventID)
}

// CountMessageFailure counts one failed processing attempt of event eventID carried by
// delivery messageID (an SQS message, a stream record), with its cause, and returns how many failures this consumer has counted
// for that message (this one included): a copy of the event sent again (a redrive sends a new
// message) is counted from 1 again. It is one UpdateItem with an atomic ADD on an item of its
// own, which expires with the Retention of records (two on a message's first failure: the
// count moves to the new message); it is called on the failure path only, so a success costs
// nothing more. A port (Engine) calls it for every transient failure and dead-letters
// the message when the count reaches its limit.
func (c *core) CountMessageFailure(ctx context.Context, eventID, messageID string, cause error) (int, error) {
	_, n, err := c.count(ctx, eventID, messageID, cause)
	return n, err
}

// MessageFailures returns how many failed attempts of event eventID this consumer has counted
// for delivery messageID, and the last one's error: 0 when none, or when the count is of
// another message. It is one consistent GetItem: the SQS port calls it only for a
// message received more often than its limit of failures, to dead-letter at once, without
// running its handler again, a message whose last failure was its limit but which could not
// be dead-lettered then.
func (c *core) MessageFailures(ctx context.Context, eventID, messageID string) (int, string, error) {
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	out, err := c.db.GetItem(callCtx, &dynamodb.GetItemInput{TableName: aws.String(c.cfg.Table),
		Key: Record{Key: attemptsKey(c.cfg.Name, eventID)}.key(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, "", fmt.Errorf("read failed attempts of %s: %w", Key(c.cfg.Name, eventID), err)
	}
	var at struct {
		MessageID       string `dynamodbav:"messageId"`
		MessageAttempts int    `dynamodbav:"messageAttempts"`
		LastError       string `dynamodbav:"lastError"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &at); err != nil {
		return 0, "", fmt.Errorf("decode failed attempts of %s: %w", Key(c.cfg.Name, eventID), err)
	}
	if at.MessageID != messageID {
		return 0, "", nil
	}
	return at.MessageAttempts, at.LastError, nil
}

// count adds a failure to eventID's item and returns the event's total and messageID's count
// (0 without a message). The message's count goes on while the item names the same message,
// and starts at 1 when it names another (or none).
func (c *core) count(ctx context.Context, eventID, messageID string, cause error) (total, n int, err error) {
	now := c.cfg.Now()
	base := func() expression.UpdateBuilder { // a new one each time: a builder's methods share its maps
		return expression.Add(expression.Name(attrAttempts), expression.Value(1)).
			Set(expression.Name("lastError"), expression.Value(truncate(cause.Error(), 1024))).
			Set(expression.Name("lastFailedAt"), expression.Value(rfc3339(now))).
			Set(expression.Name(attrExpiresAt), expression.Value(now.Add(c.cfg.Retention).Unix()))
	}
	if messageID == "" {
		return c.countWith(ctx, eventID, base(), nil)
	}
	same := expression.Name(attrMessageID).Equal(expression.Value(messageID))
	total, n, err = c.countWith(ctx, eventID, base().Add(expression.Name(attrMessageAttempts), expression.Value(1)), &same)
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return total, n, err
	}
	return c.countWith(ctx, eventID, base().Set(expression.Name(attrMessageID), expression.Value(messageID)).
		Set(expression.Name(attrMessageAttempts), expression.Value(1)), nil)
}

func (c *core) countWith(ctx context.Context, eventID string, update expression.UpdateBuilder, cond *expression.ConditionBuilder) (total, n int, err error) {
	b := expression.NewBuilder().WithUpdate(update)
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	expr, err := b.Build()
	if err != nil {
		return 0, 0, fmt.Errorf("build attempt count: %w", err)
	}
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	out, err := c.db.UpdateItem(callCtx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(c.cfg.Table),
		Key:                       Record{Key: attemptsKey(c.cfg.Name, eventID)}.key(),
		UpdateExpression:          expr.Update(),
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, 0, fmt.Errorf("count failed attempt of %s: %w", Key(c.cfg.Name, eventID), err)
	}
	if total, err = number(out.Attributes, attrAttempts); err != nil {
		return 0, 0, fmt.Errorf("count failed attempt of %s: %w", Key(c.cfg.Name, eventID), err)
	}
	if cond == nil && out.Attributes[attrMessageAttempts] == nil {
		return total, 0, nil
	}
	if n, err = number(out.Attributes, attrMessageAttempts); err != nil {
		return 0, 0, fmt.Errorf("count failed attempt of %s: %w", Key(c.cfg.Name, eventID), err)
	}
	return total, n, nil
}

func number(item map[string]types.AttributeValue, name string) (int, error) {
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("no %s returned", name)
	}
	return strconv.Atoi(v.Value)
}
