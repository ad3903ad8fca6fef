package idempotency

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// attemptsKey is the key of the item counting an event's failed attempts for a consumer. It
// starts with the key separator, which no consumer name contains, so it never collides with a
// record's key, and the record's conditional write never sees it.
func attemptsKey(consumer, eventID string) string {
	return keySeparator + "attempts" + keySeparator + Key(consumer, eventID)
}

// CountFailure counts one failed processing attempt of event eventID, with its cause, and
// returns how many this consumer has counted (this one included). It is one UpdateItem with
// an atomic ADD on an item of its own, which expires with the Retention of records; it is
// called on the failure path only, so a success costs nothing more. The batch processor calls
// it for every transient failure and dead-letters the message when the count reaches its
// limit.
func (c *core) CountFailure(ctx context.Context, eventID string, cause error) (int, error) {
	now := c.cfg.Now()
	update := expression.Add(expression.Name("attempts"), expression.Value(1)).
		Set(expression.Name("lastError"), expression.Value(truncate(cause.Error(), 1024))).
		Set(expression.Name("lastFailedAt"), expression.Value(rfc3339(now))).
		Set(expression.Name(attrExpiresAt), expression.Value(now.Add(c.cfg.Retention).Unix()))
	expr, err := expression.NewBuilder().WithUpdate(update).Build()
	if err != nil {
		return 0, fmt.Errorf("build attempt count: %w", err)
	}
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	out, err := c.db.UpdateItem(callCtx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(c.cfg.Table),
		Key:                       Record{Key: attemptsKey(c.cfg.Name, eventID)}.key(),
		UpdateExpression:          expr.Update(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, fmt.Errorf("count failed attempt of %s: %w", Key(c.cfg.Name, eventID), err)
	}
	n, ok := out.Attributes["attempts"].(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("count failed attempt of %s: no count returned", Key(c.cfg.Name, eventID))
	}
	count, err := strconv.Atoi(n.Value)
	if err != nil {
		return 0, fmt.Errorf("count failed attempt of %s: %w", Key(c.cfg.Name, eventID), err)
	}
	return count, nil
}
