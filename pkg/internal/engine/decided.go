package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/port"
)

func decidedError(item map[string]types.AttributeValue) *DecidedError {
	var rec table.Record
	_ = attributevalue.UnmarshalMap(item, &rec) // a record the condition read: its fields decode
	return &DecidedError{Key: rec.Key, Outcome: Outcome(rec.Outcome), Reason: rec.Reason, record: item}
}

// undecidedCheck is the ConditionCheck, for a transaction on the failure path, that the
// consumer has not decided event eventID of payload hash (table.Decides, as a condition):
//
//	attribute_not_exists(pk) OR expiresAt < :now OR #status = :inProgress
//	  OR (payloadHash <> :hash AND NOT (outcome = :discarded AND payloadHash = :none))
//
// It returns the record when it fails (ALL_OLD), so the event is answered from it.
func (c *core) undecidedCheck(eventID, hash string) (*types.TransactWriteItem, error) {
	now := c.cfg.Now()
	hashName := expression.Name(attrPayloadHash)
	cond := expression.Name(table.AttrKey).AttributeNotExists().
		Or(expression.Name(table.AttrExpiresAt).LessThan(expression.Value(now.Unix()))).
		Or(expression.Name(attrStatus).Equal(expression.Value(table.StatusInProgress))).
		Or(hashName.NotEqual(expression.Value(hash)).
			And(expression.Not(expression.Name("outcome").Equal(expression.Value(string(Discarded))).And(hashName.Equal(expression.Value(""))))))
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("build record condition: %w", err)
	}
	return &types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(c.cfg.Table),
		Key: table.ItemKey(table.Key(c.cfg.Name, eventID)), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}, nil
}

// answered answers a redelivered event from its record before its handler runs: a delivery
// received before (ReceiveCount above 1) or redriven (Origin) may be of an event decided
// meanwhile (its first delivery's answer lost, a discard), whose handler may fail or crash the
// function again. It costs one eventually consistent GetItem, on redeliveries only: a stale
// miss only runs the handler, whose commit (or failure path) still meets the record. done is
// true when the record decides the event (a Duplicate, or a Conflict with its error); a
// message its group's hold may list (held by the backstop, or redriven) is then taken off it.
// A failed read leaves the event to its handler.
func (c *core) answered(ctx context.Context, res Result, hash string, d port.Delivery) (Result, bool, error) {
	if !redelivered(d) {
		return res, false, nil
	}
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	start := time.Now()
	out, err := c.db.GetItem(callCtx, &dynamodb.GetItemInput{TableName: aws.String(c.cfg.Table), Key: table.ItemKey(res.Key)})
	cancel()
	res.Commit += time.Since(start)
	var rec table.Record
	if err != nil || attributevalue.UnmarshalMap(out.Item, &rec) != nil || rec.Key == "" || rec.Status == table.StatusInProgress ||
		rec.ExpiresAt < c.cfg.Now().Unix() {
		return res, false, nil
	}
	res = c.known(res, rec.PayloadHash, Outcome(rec.Outcome), rec.Reason, hash)
	if res.Outcome == Conflict {
		return res, true, c.conflictErr(res, rec.PayloadHash, hash)
	}
	c.remember(rec, Outcome(rec.Outcome), rec.Reason)
	if c.mayBeListed(d) {
		if err := c.leave(ctx, d.Group, holdlist.Held{EventID: res.EventID, MessageID: d.OriginID(), PayloadHash: hash}, nil); err != nil {
			res.Outcome = Failed
			return res, true, fmt.Errorf("answered %s from its record, but its group %s's hold not released: %w", res.Key, d.Group, err)
		}
	}
	return res, true, nil
}

// undecidedMessageCheck is undecidedCheck for a message without an event id: the ConditionCheck
// that no operator discarded message messageID of group (no live record at table.MessageKey):
//
//	attribute_not_exists(pk) OR expiresAt < :now
//
// It returns the record when it fails (ALL_OLD), so the message is answered from it.
func (c *core) undecidedMessageCheck(group, messageID string) (*types.TransactWriteItem, error) {
	expr, err := table.AbsentCondition(c.cfg.Now())
	if err != nil {
		return nil, fmt.Errorf("build record condition: %w", err)
	}
	return &types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(c.cfg.Table),
		Key: table.ItemKey(table.MessageKey(c.cfg.Name, group, messageID)), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}, nil
}

// decidedByRead is the failure path's question without a hold to write (GoOn, no group): a
// consistent GetItem of e's record; a *DecidedError when it decides e.
func (c *core) decidedByRead(ctx context.Context, e holdlist.Held) error {
	if e.EventID == "" {
		return nil
	}
	var res Result
	item, err := c.read(ctx, &res, table.Key(c.cfg.Name, e.EventID))
	if err != nil {
		return err
	}
	var rec table.Record
	if item == nil || attributevalue.UnmarshalMap(item, &rec) != nil || !table.Decides(rec, e.PayloadHash, c.cfg.Now()) {
		return nil
	}
	return decidedError(item)
}

// leave takes e off group's hold where it is listed: the entry of a message answered from its
// record, which holds nothing (the backstop's, written before it was decoded). It starts from
// start (the hold as last seen) or reads it: a conditional write when e is listed, none when
// not.
func (c *core) leave(ctx context.Context, group string, e holdlist.Held, start *holdlist.Hold) error {
	_, err := c.changeHold(ctx, group, start, nil, func(h *holdlist.Hold) bool { return holdlist.Holds(*h) && holdlist.Remove(h, e) })
	return err
}

// answeredOnFailure logs and counts an event answered from its record on its failure path, and
// returns de.
func (c *core) answeredOnFailure(ctx context.Context, e holdlist.Held, messageID string, de *DecidedError) error {
	c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "message "+string(Duplicate),
		slog.String("consumer", c.cfg.Name), slog.String("messageId", messageID), slog.String("eventId", e.EventID),
		slog.String("idempotency_key", de.Key), slog.String("outcome", string(Duplicate)), slog.String("stored", string(de.Outcome)),
		slog.String("reason", "decided already: answered from its record on its failure path"))
	c.cfg.Metrics.Count(metrics.Duplicate, 1)
	return de
}
