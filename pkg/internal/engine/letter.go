package engine

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/table"
)

// DeadLetterOnce is port.Batch.DeadLetter: send, the port's send of the dead letter of message
// messageID of group, made once per message; it reports whether it sent. A delivery whose
// letter was sent already (the same message delivered again because its batch crashed after the
// send: SQS's five minutes of deduplication may have passed) sends nothing, and is acknowledged
// by its port: the letter it would send is
// in the dead-letter queue, or an operator acted on it (a discard decides the event, a redrive
// sends a message of its own). What says so is a note written after the send (table.LetterKey,
// kept as long as a record): one consistent GetItem before the send, one PutItem after it. A
// note that cannot be read or written is logged and the letter sent all the same: at worst a
// second letter of the message, which the runbook's redrive or discard clears.
func (c *core) DeadLetterOnce(ctx context.Context, group, messageID string, send func(context.Context) error) (bool, error) {
	if messageID == "" {
		return true, send(ctx)
	}
	key := table.ItemKey(table.LetterKey(c.cfg.Name, group, messageID))
	out, err := c.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(c.cfg.Table), Key: key, ConsistentRead: aws.Bool(true)})
	switch {
	case err != nil:
		c.noteFailed(ctx, "read", group, messageID, err)
	case c.noted(out.Item):
		return false, nil
	}
	if err := send(ctx); err != nil {
		return true, err
	}
	now := c.cfg.Now()
	item := table.ItemKey(table.LetterKey(c.cfg.Name, group, messageID))
	item[table.AttrExpiresAt] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(c.cfg.Retention).Unix(), 10)}
	item["messageId"] = &types.AttributeValueMemberS{Value: messageID}
	item["sentAt"] = &types.AttributeValueMemberS{Value: table.RFC3339(now)}
	if _, err := c.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(c.cfg.Table), Item: item}); err != nil {
		c.noteFailed(ctx, "write", group, messageID, err)
	}
	return true, nil
}

// noted reports whether item is a live note of a letter sent.
func (c *core) noted(item map[string]types.AttributeValue) bool {
	n, ok := item[table.AttrExpiresAt].(*types.AttributeValueMemberN)
	if !ok {
		return false
	}
	at, err := strconv.ParseInt(n.Value, 10, 64)
	return err == nil && at >= c.cfg.Now().Unix()
}

func (c *core) noteFailed(ctx context.Context, what, group, messageID string, err error) {
	c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "the note of a dead letter sent could not be "+what+
		": a later delivery of the message may send a second letter",
		slog.String("consumer", c.cfg.Name), slog.String("group", group), slog.String("messageId", messageID),
		slog.String("error", err.Error()))
}
