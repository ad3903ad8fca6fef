package engine

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// noteLifetime is how long the note of a letter sent is kept: SQS's longest retention, so
// that every delivery of an SQS message falls within it, and no longer, so that the letter
// outlives it in a dead-letter queue that keeps its letters as long (the template's do). A
// record delivered again past it (a stream read again from its start) sends a letter again.
const noteLifetime = 14 * 24 * time.Hour

// DeadLetterOnce is port.Batch.DeadLetter: send, the port's send of the dead letter of message
// messageID of group, made once per message; it reports whether it sent. A delivery whose
// letter was sent already (the same message delivered again because its batch crashed after the
// send: SQS's five minutes of deduplication may have passed) sends nothing, and is acknowledged
// by its port: the letter it would send is in the dead-letter queue, or an operator acted on it
// (a discard decides the event, a redrive sends a message of its own). What says so is a note
// written after the send (table.LetterKey, kept noteLifetime): one consistent GetItem before
// the send, one PutItem after it. A note that cannot be read or written is logged (a denial as
// every denial is, counted as metrics.AccessDenied) and the letter sent all the same: at worst a
// second letter of the message, which the runbook's redrive or discard clears.
func (c *core) DeadLetterOnce(ctx context.Context, group, messageID string, send func(context.Context) error) (bool, error) {
	if messageID == "" {
		err := send(ctx)
		return err == nil, err
	}
	key := table.ItemKey(table.LetterKey(c.cfg.Name, group, messageID))
	out, err := c.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(c.cfg.Table), Key: key, ConsistentRead: aws.Bool(true)})
	switch {
	case err != nil:
		c.noteFailed(ctx, "reading the note of a dead letter sent", group, messageID, err)
	case c.noted(out.Item):
		return false, nil
	}
	if err := send(ctx); err != nil {
		return false, err
	}
	now := c.cfg.Now()
	key[table.AttrExpiresAt] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(noteLifetime).Unix(), 10)}
	key["messageId"] = &types.AttributeValueMemberS{Value: messageID}
	key["sentAt"] = &types.AttributeValueMemberS{Value: table.RFC3339(now)}
	if _, err := c.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(c.cfg.Table), Item: key}); err != nil {
		c.noteFailed(ctx, "writing the note of a dead letter sent", group, messageID, err)
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

// noteFailed logs a note that could not be read or written: a denial as every denial is, any
// other failure as a warning. The letter is sent all the same.
func (c *core) noteFailed(ctx context.Context, doing, group, messageID string, err error) {
	attrs := []slog.Attr{slog.String("consumer", c.cfg.Name), slog.String("group", group), slog.String("messageId", messageID),
		slog.String("outcome", "the letter sent all the same: a later delivery of the message may send a second one")}
	if d, ok := denied.Of(err); ok {
		denied.Log(ctx, c.cfg.Logger, c.cfg.Metrics, d, doing, attrs...)
		return
	}
	c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, doing+" failed", append(attrs, slog.String("error", err.Error()))...)
}
