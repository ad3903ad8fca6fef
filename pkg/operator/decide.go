package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// An operator's decisions, each written conditionally on the item as the operator was shown
// it: when it changed meanwhile, the write is refused with an error matching
// ErrChanged.

// ReleaseHoldIf lets shown's group go on without any held message if the hold is still shown
// (same version, same blocker), so that a hold replaced meanwhile (its blocker applied, another
// message held) is never released unseen: its list and pages are deleted; the operators'
// skips are kept on its item until idempotency.DefaultRetention, so that a skipped message redriven later
// holds the group no more. The group's held messages are then applied as they come.
func (a *Admin) ReleaseHoldIf(ctx context.Context, h Hold) error {
	shown := h.list()
	holdlist.Shown(&shown)
	if err := holdlist.LoadPages(ctx, a.db, a.table, &shown); err != nil { // its pages go too
		return err
	}
	next := holdlist.Clone(shown)
	next.Held = nil
	return a.writeHold(ctx, shown, next, holdlist.HeadCondition(shown, shown.BlockerEventID))
}

// SkipBlocker lets shown's group go on past its blocker (the head of its held list) if the
// hold is still shown: the blocker is recorded in Skipped with who decided and why (so that it
// never holds the group again, whenever it comes back), the other entries of its message or
// event go with it (a producer's re-send, listed after it), and the next held message becomes
// the head, so the held tail keeps its order. The blocker's letter stays in the dead-letter queue
// (onceflow hold skip moves it behind the group's other letters); redriven later, it is
// applied out of order, or dead-lettered again unheld. It returns the hold as written.
func (a *Admin) SkipBlocker(ctx context.Context, h Hold, by, why string) (Hold, error) {
	shown := h.list()
	holdlist.Shown(&shown)
	if !holdlist.Holds(shown) {
		return holdOf(shown), fmt.Errorf("group %s: nothing held to skip", shown.Group)
	}
	if err := holdlist.LoadPages(ctx, a.db, a.table, &shown); err != nil { // a page may move into its own item
		return holdOf(shown), err
	}
	next := holdlist.Clone(shown)
	now := time.Now()
	holdlist.Pop(&next, &holdlist.Decision{By: by, Why: why, At: table.RFC3339(now)})
	holdlist.RemoveSure(&next, shown.Held[0]) // its event's other entries: a producer's re-send, listed after it
	if err := a.writeHold(ctx, shown, next, holdlist.HeadCondition(shown, shown.BlockerEventID)); err != nil {
		return holdOf(shown), err
	}
	return holdOf(holdlist.Written(shown, next)), nil // its version, pages and list as now stored
}

// writeHold writes next in place of shown, conditional on cond, in one transaction (the hold's
// own item and its pages); a refusal is ErrChanged.
func (a *Admin) writeHold(ctx context.Context, shown, next holdlist.Hold, cond expression.ConditionBuilder) error {
	w, err := holdlist.Writes(a.table, shown, next, cond, time.Now())
	if err != nil || len(w) == 0 {
		return err
	}
	_, err = a.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: w})
	return changed(err, "hold of group "+shown.Group)
}

// DeleteRecordIf deletes shown, consumer's record of an event, and its attempt count, if the
// record is still shown: same outcome and processing time, and in lease mode the same status,
// owner and lease. A lease completed meanwhile is therefore never deleted (its side effect
// would run again).
func (a *Admin) DeleteRecordIf(ctx context.Context, shown Record) error {
	cond := expression.AttributeExists(expression.Name(table.AttrKey))
	for name, v := range map[string]string{"outcome": shown.Outcome, "processedAt": shown.ProcessedAt, "status": shown.Status, "owner": shown.Owner} {
		cond = cond.And(sameString(name, v))
	}
	if shown.LeaseExpiresAt == 0 {
		cond = cond.And(expression.AttributeNotExists(expression.Name("leaseExpiresAt")))
	} else {
		cond = cond.And(expression.Name("leaseExpiresAt").Equal(expression.Value(shown.LeaseExpiresAt)))
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("build record condition: %w", err)
	}
	_, err = a.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(a.table), Key: table.ItemKey(shown.Key),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	if err := changed(err, "record "+shown.Key); err != nil {
		return err
	}
	attempts := table.AttemptsKey(shown.Consumer, shown.EventID)
	_, err = a.delete(ctx, attempts, &Attempts{})
	return err
}

func sameString(name, v string) expression.ConditionBuilder {
	if v == "" {
		return expression.AttributeNotExists(expression.Name(name))
	}
	return expression.Name(name).Equal(expression.Value(v))
}

// changed turns a failed condition into an error matching ErrChanged.
func changed(err error, what string) error {
	var ccf *types.ConditionalCheckFailedException
	var tce *types.TransactionCanceledException
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ccf), errors.As(err, &tce):
		return fmt.Errorf("%s: %w", what, ErrChanged)
	}
	return fmt.Errorf("%s: %w", what, err)
}
