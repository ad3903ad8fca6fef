package idempotency

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Hold is a group held under HoldGroup: the item that holds it, one per consumer and group, in
// the idempotency table. Held lists the group's messages dead-lettered while it is held, in
// the group's order; its head is the blocker, which the Blocker fields describe. Each message
// of the list is applied only once every message before it has been applied, rejected,
// discarded or skipped, and the hold goes with the last one. Version counts the hold's
// changes: every write of it is conditional on the version it read.
type Hold struct {
	Key            string     `dynamodbav:"pk"`
	Consumer       string     `dynamodbav:"consumer"`
	Group          string     `dynamodbav:"group"`
	BlockerEventID string     `dynamodbav:"blockerEventId"`   // the head's event id
	BlockerMessage string     `dynamodbav:"blockerMessageId"` // the head's SQS message id
	BlockerReason  string     `dynamodbav:"blockerReason"`    // why the head was dead-lettered
	HeldAt         string     `dynamodbav:"heldAt"`           // when the head was held, RFC 3339
	Held           []Held     `dynamodbav:"held"`
	Skipped        []Decision `dynamodbav:"skipped,omitempty"` // blockers an operator let the group go on past
	Version        int64      `dynamodbav:"version"`
	// ExpiresAt is set once nothing is held any more and only Skipped is kept: the item then
	// holds nothing, and TTL deletes it after DefaultRetention.
	ExpiresAt int64 `dynamodbav:"expiresAt,omitempty"`

	exists bool // read from the table (false: a hold about to be created)
}

// Held is one dead-lettered message of a held group.
type Held struct {
	EventID   string `dynamodbav:"eventId"`   // "" when the message had no usable event id
	MessageID string `dynamodbav:"messageId"` // the id it was first sent as (Delivery.OriginID)
	Reason    string `dynamodbav:"reason"`    // why it was dead-lettered
	HeldAt    string `dynamodbav:"heldAt"`
}

// Decision is an operator's decision about a held message.
type Decision struct {
	Held
	By  string `dynamodbav:"by"`
	Why string `dynamodbav:"why"`
	At  string `dynamodbav:"at"`
}

// same reports whether e and o name one message: by event id, or by the id the message was
// first sent as (a message held before it was decoded has no event id; one redriven comes
// back under a new message id, carrying its first).
func (e Held) same(o Held) bool {
	if e.EventID != "" && e.EventID == o.EventID {
		return true
	}
	return e.MessageID != "" && e.MessageID == o.MessageID
}

func (e Held) String() string {
	if e.EventID == "" {
		return "message " + e.MessageID
	}
	return "event " + e.EventID
}

// held reports whether h holds its group.
func (h Hold) held() bool { return len(h.Held) > 0 }

// add appends e to the held list unless it is there already (it keeps its place), and
// reports whether it changed the list: an entry held by message id only learns e's event id.
func (h *Hold) add(e Held) bool {
	for i, o := range h.Held {
		if o.same(e) {
			if o.EventID != "" || e.EventID == "" {
				return false
			}
			h.Held[i].EventID = e.EventID
			h.describeHead()
			return true
		}
	}
	if h.held() && e.Reason == "" {
		e.Reason = truncate("held behind "+h.Held[len(h.Held)-1].String(), 256)
	}
	h.Held = append(h.Held, e)
	h.ExpiresAt = 0
	h.describeHead()
	return true
}

// remove takes e off the held list, wherever it is, and reports whether it was there; when
// skip is not nil, it is recorded in Skipped.
func (h *Hold) remove(e Held, skip *Decision) bool {
	for i, o := range h.Held {
		if o.same(e) {
			h.Held = append(h.Held[:i:i], h.Held[i+1:]...)
			if skip != nil {
				skip.Held = o
				h.Skipped = append(h.Skipped, *skip)
			}
			h.describeHead()
			return true
		}
	}
	return false
}

// pop takes the head off the held list (recording it in Skipped when skip is not nil).
func (h *Hold) pop(skip *Decision) bool { return h.held() && h.remove(h.Held[0], skip) }

func (h *Hold) describeHead() {
	if !h.held() {
		return
	}
	head := h.Held[0]
	h.BlockerEventID, h.BlockerMessage, h.BlockerReason, h.HeldAt = head.EventID, head.MessageID, head.Reason, head.HeldAt
}

func (h Hold) item() (map[string]types.AttributeValue, error) {
	if h.Held == nil {
		h.Held = []Held{} // an empty list, which size() reads, rather than NULL
	}
	item, err := attributevalue.MarshalMap(h)
	if err != nil {
		return nil, fmt.Errorf("encode hold of group %s: %w", h.Group, err)
	}
	return item, nil
}

// decodeHold reads a hold item; an empty item is a hold about to be created. A hold written
// before holds kept a list is read as a list of its blocker.
func decodeHold(item map[string]types.AttributeValue, consumer, group string) (Hold, error) {
	h := Hold{Key: holdKey(consumer, group), Consumer: consumer, Group: group}
	if len(item) == 0 {
		return h, nil
	}
	if err := attributevalue.UnmarshalMap(item, &h); err != nil {
		return h, fmt.Errorf("decode hold of group %s: %w", group, err)
	}
	h.exists = true
	if len(h.Held) == 0 && h.Version == 0 && (h.BlockerEventID != "" || h.BlockerMessage != "") {
		h.Held = []Held{{EventID: h.BlockerEventID, MessageID: h.BlockerMessage, Reason: h.BlockerReason, HeldAt: h.HeldAt}}
	}
	return h, nil
}

// versionCondition is true when the hold is still h as read: absent, or at h's version.
func versionCondition(h Hold) expression.ConditionBuilder {
	switch {
	case !h.exists:
		return expression.AttributeNotExists(expression.Name(attrKey))
	case h.Version == 0: // written before holds had versions
		return expression.AttributeExists(expression.Name(attrKey)).And(expression.AttributeNotExists(expression.Name("version")))
	}
	return expression.Name("version").Equal(expression.Value(h.Version))
}

// headCondition is true when the hold is still h and eventID heads it.
func headCondition(h Hold, eventID string) expression.ConditionBuilder {
	if h.Version == 0 {
		return versionCondition(h).And(expression.Name("blockerEventId").Equal(expression.Value(eventID)))
	}
	return versionCondition(h).And(expression.Name("held[0].eventId").Equal(expression.Value(eventID)))
}

// ErrChanged is matched by an error that reports a conditional write refused because the item
// changed since it was read (and shown).
var ErrChanged = errors.New("changed since it was read")

// writeHold writes next in place of prev (as read): a Put at the next version, or a Delete
// when next holds nothing and records no skip; conditional on prev. A lost race is an error
// matching ErrChanged.
func writeHold(ctx context.Context, db holdDB, table string, prev, next Hold, optFns ...func(*dynamodb.Options)) error {
	w, err := holdWrite(table, prev, next, versionCondition(prev))
	if err != nil {
		return err
	}
	if w.Delete != nil {
		d := w.Delete
		_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: d.TableName, Key: d.Key, ConditionExpression: d.ConditionExpression,
			ExpressionAttributeNames: d.ExpressionAttributeNames, ExpressionAttributeValues: d.ExpressionAttributeValues}, optFns...)
	} else if p := w.Put; p != nil {
		_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression,
			ExpressionAttributeNames: p.ExpressionAttributeNames, ExpressionAttributeValues: p.ExpressionAttributeValues}, optFns...)
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("hold of group %s: %w", prev.Group, ErrChanged)
	}
	return err
}

// holdWrite is the write of next in place of prev, conditional on cond (see writeHold); zero
// when there is nothing to write.
func holdWrite(table string, prev, next Hold, cond expression.ConditionBuilder) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build hold condition: %w", err)
	}
	if !next.held() && len(next.Skipped) == 0 {
		if !prev.exists {
			return types.TransactWriteItem{}, nil
		}
		return types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(table), Key: Record{Key: prev.Key}.key(),
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}, nil
	}
	next.Version = prev.Version + 1
	if !next.held() && next.ExpiresAt == 0 { // only skips are kept: TTL deletes it in time
		next.ExpiresAt = time.Now().Add(DefaultRetention).Unix()
	}
	item, err := next.item()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item,
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}, nil
}

// holdDB is the calls that change a hold.
type holdDB interface {
	PutItem(ctx context.Context, params *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, params *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// changeHold reads the group's hold (or takes it from old when known), lets change change it,
// and writes it conditionally on what was read; a lost race reads it again. It returns the
// hold as changed (or as read, when change changed nothing). Only the recovery path calls it.
func (c *core) changeHold(ctx context.Context, group string, old map[string]types.AttributeValue, known bool, change func(*Hold) bool) (Hold, error) {
	for attempt := 1; ; attempt++ {
		var err error
		if !known {
			if old, err = c.readHold(ctx, group); err != nil {
				return Hold{}, err
			}
		}
		prev, err := decodeHold(old, c.cfg.Name, group)
		if err != nil {
			return Hold{}, err
		}
		next := prev
		next.Held = append([]Held(nil), prev.Held...)
		if !change(&next) {
			return prev, nil
		}
		callCtx, cancel := c.cfg.Retry.bound(ctx)
		err = writeHold(callCtx, c.db, c.cfg.Table, prev, next, c.cfg.Retry.single)
		cancel()
		if err == nil {
			next.Version, next.exists = prev.Version+1, next.held()
			return next, nil
		}
		if IsAccessDenied(err) { // denied again on a retry: the deployment's fault
			return Hold{}, fmt.Errorf("change hold: %w", err)
		}
		if refused(err) { // retrying cannot help
			if tooLarge(err) {
				err = fmt.Errorf("%w (%d messages held): %v", ErrHoldFull, len(next.Held), err)
				c.cfg.Logger.LogAttrs(ctx, slog.LevelError, "group's held list at DynamoDB's item size limit: message not held, left to the queue's redrive policy",
					slog.String("consumer", c.cfg.Name), slog.String("group", group), slog.Int("held", len(next.Held)),
					slog.String("limit", "400 KB per item"), slog.String("error", err.Error()))
			}
			return Hold{}, fmt.Errorf("change hold: %w", err)
		}
		known = false // read it again: changed meanwhile, or the write's answer was lost
		if !c.cfg.Retry.wait(ctx, attempt) {
			return Hold{}, fmt.Errorf("change hold after %d attempts: %w", attempt, err)
		}
	}
}

// readHold reads the group's hold consistently; nil when there is none.
func (c *core) readHold(ctx context.Context, group string) (map[string]types.AttributeValue, error) {
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	out, err := c.db.GetItem(callCtx, &dynamodb.GetItemInput{TableName: aws.String(c.cfg.Table),
		Key: Record{Key: holdKey(c.cfg.Name, group)}.key(), ConsistentRead: aws.Bool(true)}, c.cfg.Retry.single)
	if err != nil {
		return nil, fmt.Errorf("read hold of group %s: %w", group, err)
	}
	return out.Item, nil
}
