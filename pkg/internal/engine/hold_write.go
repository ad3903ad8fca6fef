package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/port"
)

// holdDB is the calls that read and change a hold.
type holdDB interface {
	holdlist.Getter
	PutItem(ctx context.Context, params *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, params *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	TransactWriteItems(ctx context.Context, params *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// sendHold makes writes: one PutItem or DeleteItem when it is one (the hold's own item alone),
// else one TransactWriteItems.
func sendHold(ctx context.Context, db holdDB, writes []types.TransactWriteItem, optFns ...func(*dynamodb.Options)) error {
	var err error
	switch w := writes[0]; {
	case len(writes) > 1 || w.ConditionCheck != nil:
		_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes}, optFns...)
	case w.Delete != nil:
		d := w.Delete
		_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: d.TableName, Key: d.Key, ConditionExpression: d.ConditionExpression,
			ExpressionAttributeNames: d.ExpressionAttributeNames, ExpressionAttributeValues: d.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}, optFns...)
	case w.Put != nil:
		p := w.Put
		_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression,
			ExpressionAttributeNames: p.ExpressionAttributeNames, ExpressionAttributeValues: p.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}, optFns...)
	}
	return err
}

// refusedAt tells which of writes DynamoDB refused by their condition, and the item each found:
// the reasons of a cancelled transaction, or the one write's ConditionalCheckFailedException.
// ok is false when err is no such refusal.
func refusedAt(err error, writes int) (failed []bool, items []map[string]types.AttributeValue, ok bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && writes == 1 {
		return []bool{true}, []map[string]types.AttributeValue{ccf.Item}, true
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != writes {
		return nil, nil, false
	}
	failed, items = make([]bool, writes), make([]map[string]types.AttributeValue, writes)
	for i, r := range tce.CancellationReasons {
		switch code := aws.ToString(r.Code); {
		case code == "ConditionalCheckFailed":
			failed[i], items[i], ok = true, r.Item, true
		case code != "" && code != "None":
			return nil, nil, false // a conflict, a throttle: transient
		}
	}
	return failed, items, ok
}

// changeHold changes the group's hold: it starts from start (the hold as last seen: the item a
// refusal returned, or a hold taken to be absent, so that creating one costs one write) or
// reads it when start is nil, reads its pages, lets change change it, and writes it
// conditionally on what it read, with check (a ConditionCheck that the event is not decided,
// undecidedCheck) in the same transaction when given; a hold changed meanwhile is taken again
// from what the refusal returned. It returns the hold as changed (or as read, when change
// changed nothing: the check is still made). A failed check is a *DecidedError: nothing is
// written. Only the recovery path calls it.
func (c *core) changeHold(ctx context.Context, group string, start *holdlist.Hold, checks []types.TransactWriteItem, change func(*holdlist.Hold) bool) (holdlist.Hold, error) {
	for attempt := 1; ; attempt++ {
		prev, err := c.holdFrom(ctx, group, start)
		if err != nil {
			return holdlist.Hold{}, err
		}
		next := holdlist.Clone(prev)
		changed := change(&next)
		writes := slices.Clone(checks)
		if changed {
			w, err := holdlist.Writes(c.cfg.Table, prev, next, holdlist.VersionCondition(prev), c.cfg.Now())
			if err != nil {
				return holdlist.Hold{}, err
			}
			writes = append(writes, w...)
		}
		if len(writes) == 0 {
			return prev, nil
		}
		callCtx, cancel := c.cfg.Retry.bound(ctx)
		err = sendHold(callCtx, c.db, writes, c.cfg.Retry.single)
		cancel()
		if err == nil {
			if changed {
				return holdlist.Written(prev, next), nil // a page emptied by the change is gone
			}
			return prev, nil
		}
		if failed, items, ok := refusedAt(err, len(writes)); ok {
			own := len(checks)
			fresh := prev // as read, unless its own write was refused: then as the refusal found it
			if changed && failed[own] {
				if fresh, err = holdlist.Decode(items[own], c.cfg.Name, group); err != nil {
					return holdlist.Hold{}, err
				}
			}
			for i := range checks {
				if failed[i] {
					return fresh, decidedError(items[i])
				}
			}
			start = &fresh // changed meanwhile: change it as it is now
			if attempt < c.cfg.Retry.MaxAttempts {
				continue
			}
			return holdlist.Hold{}, fmt.Errorf("change hold after %d attempts: %w", attempt, table.ErrChanged)
		}
		if denied.Is(err) { // denied again on a retry: the deployment's fault
			return holdlist.Hold{}, fmt.Errorf("change hold: %w", err)
		}
		if refused(err) { // retrying cannot help
			if tooLarge(err) {
				err = fmt.Errorf("%w (%d messages held): %v", port.ErrHoldFull, len(next.Held), err)
				c.cfg.Logger.LogAttrs(ctx, slog.LevelError, "group's hold refused by DynamoDB's item size limit: message not held",
					slog.String("consumer", c.cfg.Name), slog.String("group", group), slog.Int("held", len(next.Held)),
					slog.String("limit", "400 KB per item"), slog.String("error", err.Error()))
			}
			return holdlist.Hold{}, fmt.Errorf("change hold: %w", err)
		}
		start = nil // read it again: the write's answer may have been lost
		if !c.cfg.Retry.wait(ctx, attempt) {
			return holdlist.Hold{}, fmt.Errorf("change hold after %d attempts: %w", attempt, err)
		}
	}
}

// holdFrom returns the group's hold, whole: start when given, else read; its pages read.
func (c *core) holdFrom(ctx context.Context, group string, start *holdlist.Hold) (holdlist.Hold, error) {
	var h holdlist.Hold
	if start != nil {
		h = holdlist.Clone(*start)
	} else {
		item, err := c.readHold(ctx, group)
		if err != nil {
			return holdlist.Hold{}, err
		}
		if h, err = holdlist.Decode(item, c.cfg.Name, group); err != nil {
			return holdlist.Hold{}, err
		}
	}
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	return h, holdlist.LoadPages(callCtx, c.db, c.cfg.Table, &h)
}

// absentHold is the group's hold taken to be absent, to start a change from (changeHold).
func (c *core) absentHold(group string) *holdlist.Hold {
	h, _ := holdlist.Decode(nil, c.cfg.Name, group)
	return &h
}

// readHold reads the group's hold's own item consistently; nil when there is none.
func (c *core) readHold(ctx context.Context, group string) (map[string]types.AttributeValue, error) {
	callCtx, cancel := c.cfg.Retry.bound(ctx)
	defer cancel()
	out, err := c.db.GetItem(callCtx, &dynamodb.GetItemInput{TableName: aws.String(c.cfg.Table),
		Key: table.ItemKey(table.HoldKey(c.cfg.Name, group)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read hold of group %s: %w", group, err)
	}
	return out.Item, nil
}
