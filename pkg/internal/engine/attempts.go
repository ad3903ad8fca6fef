package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/port"
)

// Attribute names of the attempts item besides Attempts' own.
const (
	attrAttempts        = "attempts"        // every failure counted for the event, whatever its message
	attrMessageID       = "messageId"       // the SQS message whose failures messageAttempts counts
	attrMessageAttempts = "messageAttempts" // failures of that message
)

// CountMessageFailure counts one failed processing attempt of event ev carried by delivery d
// (an SQS message, a stream record), with its cause, and returns how many failures this
// consumer has counted for that message (this one included): a copy of the event sent again
// (a redrive sends a new message) is counted from 1 again. A port.Batch (port.Engine.Begin) calls it for
// every transient failure, and makes the failure permanent when the count reaches its limit.
//
// The count and the question whether the consumer has decided ev already (its record applied,
// rejected or discarded, with the same payload) are one TransactWriteItems: a ConditionCheck of
// the record beside an Update of the event's attempts item, on an item of its own, which
// expires with the Retention of records. A decided event is not counted: it is answered from
// its record, a *DecidedError (ErrDecided), taken off its group's hold if the port held it
// there. One call when the count is as the delivery's receive count says (each earlier
// receive one failure), one more when it is not (the refusal returns the count); it is called
// on the failure path only, so a success costs nothing more.
func (c *core) CountMessageFailure(ctx context.Context, ev cloudevent.Event, d port.Delivery, cause error) (int, error) {
	hash := ev.PayloadHash()
	n, err := c.count(ctx, ev.ID, hash, d, cause)
	var de *DecidedError
	if !errors.As(err, &de) {
		return n, err
	}
	e := holdlist.Held{EventID: ev.ID, MessageID: d.OriginID(), PayloadHash: hash}
	if c.mayBeListed(d) {
		if err := c.leave(ctx, d.Group, e, nil); err != nil {
			return 0, fmt.Errorf("%s was decided already, but its group %s's hold not released: %w", ev.ID, d.Group, err)
		}
	}
	return 0, c.answeredOnFailure(ctx, e, d.MessageID, de)
}

// MessageFailures returns how many failed attempts of event eventID this consumer has counted
// for delivery messageID, and the last one's error: 0 when none, or when the count is of
// another message. It is one consistent GetItem: a Batch (Engine.Begin) calls it only for a
// message received more often than its limit of failures, to dead-letter at once, without
// running its handler again, a message whose last failure was its limit but which could not
// be dead-lettered then.
func (c *core) MessageFailures(ctx context.Context, eventID, messageID string) (int, string, error) {
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	out, err := c.db.GetItem(callCtx, &dynamodb.GetItemInput{TableName: aws.String(c.cfg.Table),
		Key: table.ItemKey(table.AttemptsKey(c.cfg.Name, eventID)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return 0, "", fmt.Errorf("read failed attempts of %s: %w", table.Key(c.cfg.Name, eventID), err)
	}
	var at struct {
		MessageID       string `dynamodbav:"messageId"`
		MessageAttempts int    `dynamodbav:"messageAttempts"`
		LastError       string `dynamodbav:"lastError"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &at); err != nil {
		return 0, "", fmt.Errorf("decode failed attempts of %s: %w", table.Key(c.cfg.Name, eventID), err)
	}
	if at.MessageID != messageID {
		return 0, "", nil
	}
	return at.MessageAttempts, at.LastError, nil
}

// count adds a failure to eventID's attempts item, unless the consumer decided the event
// (undecidedCheck), and returns d's count (0 without a message id). The message's count goes on
// while the item names the same message, and starts at 1 when it names another (or none). Its
// Update is conditional on the count it expects, first the one d's receive count suggests, so
// that the transaction, which returns no values, still knows the count it wrote; a refusal
// returns the item as it is, and the count is written again from there.
func (c *core) count(ctx context.Context, eventID, hash string, d port.Delivery, cause error) (int, error) {
	check, err := c.undecidedCheck(eventID, hash)
	if err != nil {
		return 0, err
	}
	key := table.Key(c.cfg.Name, eventID)
	prior := max(d.ReceiveCount-1, 0) // each earlier receive of the message failed once
	for attempt := 1; ; attempt++ {
		update, err := c.countUpdate(eventID, d.MessageID, prior, cause)
		if err != nil {
			return 0, err
		}
		callCtx, cancel := c.cfg.Retry.bound(ctx)
		_, err = c.db.TransactWriteItems(callCtx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{*check, update}}, c.cfg.Retry.single)
		cancel()
		switch failed, items, refusal := refusedAt(err, 2); {
		case err == nil && d.MessageID == "":
			return 0, nil
		case err == nil:
			return prior + 1, nil
		case refusal && failed[0]:
			return 0, decidedError(items[0])
		case refusal: // the count is not the one expected: go on from the one there
			var at struct {
				MessageID       string `dynamodbav:"messageId"`
				MessageAttempts int    `dynamodbav:"messageAttempts"`
			}
			if err := attributevalue.UnmarshalMap(items[1], &at); err != nil {
				return 0, fmt.Errorf("count failed attempt of %s: %w", key, err)
			}
			prior = 0
			if at.MessageID == d.MessageID {
				prior = at.MessageAttempts
			}
			if attempt < c.cfg.Retry.MaxAttempts {
				continue
			}
			return 0, fmt.Errorf("count failed attempt of %s after %d attempts: %w", key, attempt, table.ErrChanged)
		}
		if !c.cfg.Retry.wait(ctx, attempt) {
			return 0, fmt.Errorf("count failed attempt of %s after %d attempts: %w", key, attempt, err)
		}
	}
}

// countUpdate is the Update that counts a failure of message messageID, expected to have
// failed prior times before (0: the item names another message, or none).
func (c *core) countUpdate(eventID, messageID string, prior int, cause error) (types.TransactWriteItem, error) {
	now := c.cfg.Now()
	update := expression.Add(expression.Name(attrAttempts), expression.Value(1)).
		Set(expression.Name("lastError"), expression.Value(table.Truncate(cause.Error(), 1024))).
		Set(expression.Name("lastFailedAt"), expression.Value(table.RFC3339(now))).
		Set(expression.Name(table.AttrExpiresAt), expression.Value(now.Add(c.cfg.Retention).Unix()))
	b := expression.NewBuilder()
	msg := expression.Name(attrMessageID)
	switch {
	case messageID == "":
	case prior == 0:
		update = update.Set(msg, expression.Value(messageID)).Set(expression.Name(attrMessageAttempts), expression.Value(1))
		b = b.WithCondition(msg.AttributeNotExists().Or(msg.NotEqual(expression.Value(messageID))))
	default:
		update = update.Set(expression.Name(attrMessageAttempts), expression.Value(prior+1))
		b = b.WithCondition(msg.Equal(expression.Value(messageID)).And(expression.Name(attrMessageAttempts).Equal(expression.Value(prior))))
	}
	expr, err := b.WithUpdate(update).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build attempt count: %w", err)
	}
	return types.TransactWriteItem{Update: &types.Update{TableName: aws.String(c.cfg.Table), Key: table.ItemKey(table.AttemptsKey(c.cfg.Name, eventID)),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(),
		ExpressionAttributeValues: expr.Values(), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}, nil
}
