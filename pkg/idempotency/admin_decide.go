package idempotency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// An operator's decisions, each written conditionally on the item as the operator was shown
// it: when it changed meanwhile, the write is refused with an error matching ErrChanged.

// ReleaseHoldIf deletes the hold of shown's group if it is still shown (same version, same
// blocker), so that a hold replaced meanwhile (its blocker applied, another message held) is
// never deleted unseen. The group's held messages are then applied as they come.
func (a *Admin) ReleaseHoldIf(ctx context.Context, shown Hold) error {
	shown.exists = true
	expr, err := expression.NewBuilder().WithCondition(headCondition(shown, shown.BlockerEventID)).Build()
	if err != nil {
		return fmt.Errorf("build hold condition: %w", err)
	}
	_, err = a.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(a.table), Key: Record{Key: shown.Key}.key(),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	return changed(err, "hold of group "+shown.Group)
}

// SkipBlocker lets shown's group go on past its blocker (the head of its held list) if the
// hold is still shown: the blocker is recorded in Skipped with who decided and why, and the
// next held message becomes the head, so the held tail keeps its order. The blocker's letter
// stays where it is; redriven later, it is applied out of order. It returns the hold as
// written.
func (a *Admin) SkipBlocker(ctx context.Context, shown Hold, by, why string) (Hold, error) {
	shown.exists = true
	if !shown.held() {
		return shown, fmt.Errorf("group %s: nothing held to skip", shown.Group)
	}
	next := shown
	next.Held = append([]Held(nil), shown.Held...)
	now := time.Now()
	next.pop(&Decision{By: by, Why: why, At: rfc3339(now)})
	if !next.held() {
		next.ExpiresAt = now.Add(DefaultRetention).Unix()
	}
	w, err := holdWrite(a.table, shown, next, headCondition(shown, shown.BlockerEventID))
	if err != nil {
		return shown, err
	}
	_, err = a.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{w}})
	if err = changed(err, "hold of group "+shown.Group); err != nil {
		return shown, err
	}
	next.Version++
	return next, nil
}

// DeleteRecordIf deletes shown, consumer's record of an event, and its attempt count, if the
// record is still shown: same outcome and processing time, and in lease mode the same status,
// owner and lease. A lease completed meanwhile is therefore never deleted (its side effect
// would run again).
func (a *Admin) DeleteRecordIf(ctx context.Context, shown Record) error {
	cond := expression.AttributeExists(expression.Name(attrKey))
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
	_, err = a.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(a.table), Key: Record{Key: shown.Key}.key(),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	if err := changed(err, "record "+shown.Key); err != nil {
		return err
	}
	attempts := attemptsKey(shown.Consumer, shown.EventID)
	_, err = a.delete(ctx, attempts, &Attempts{})
	return err
}

func sameString(name, v string) expression.ConditionBuilder {
	if v == "" {
		return expression.AttributeNotExists(expression.Name(name))
	}
	return expression.Name(name).Equal(expression.Value(v))
}

// Discard is what an operator discards: a dead letter's event, for one consumer.
type Discard struct {
	Consumer  string
	EventID   string // "" when the letter has no usable event id: only the hold changes
	MessageID string // the letter's message id on its source queue (SQS keeps it), for the hold
	Group     string // its group, whose hold it leaves
	Body      string // kept in the record, cut to MaxDiscardedBody bytes
	// Attributes are the letter's message attributes (and its trace header), kept in the
	// record as a JSON object.
	Attributes map[string]string
	By, Why    string        // who decides, and why
	Retention  time.Duration // how long the record answers a redelivery; default DefaultRetention
}

// MaxDiscardedBody bounds the copy of a discarded letter's body kept in its record.
const MaxDiscardedBody = 64 << 10

// Discard records that d's event is not to be applied by d's consumer (the outcome Discarded,
// with who, why, when, the body and attributes), so that a redelivery of it is answered as a
// duplicate and never applied, and in the same transaction takes it off its group's held
// list, wherever it is, so that the messages held behind it go on in order. It is refused
// (ErrChanged) when the consumer has a live record of the event: it was applied or decided
// meanwhile. A letter whose event id has a record of another payload (a conflict) keeps that
// record, which answers a redelivery of the letter as a conflict again: only the hold
// changes. It returns the record that answers a redelivery (zero without an event id).
// Deleting the letter from the dead-letter queue is the caller's next step.
func (a *Admin) Discard(ctx context.Context, d Discard) (Record, error) {
	now := time.Now()
	rec, err := discardRecord(d, now)
	if err != nil {
		return rec, err
	}
	write := d.EventID != ""
	if write {
		old, ok, err := a.Record(ctx, d.Consumer, d.EventID)
		switch {
		case err != nil:
			return rec, err
		case ok && old.ExpiresAt >= now.Unix() && old.PayloadHash != rec.PayloadHash:
			rec, write = old, false // a conflict: the applied event's record stays
		case ok && old.ExpiresAt >= now.Unix():
			return old, fmt.Errorf("event %s has a record of consumer %s (%s): it was applied or decided already, nothing to discard: %w",
				d.EventID, d.Consumer, old.Outcome, ErrChanged)
		}
	}
	for attempt := 1; ; attempt++ {
		var items []types.TransactWriteItem
		if write {
			put, err := recordPut(a.table, rec, now)
			if err != nil {
				return rec, err
			}
			items = append(items, put)
		}
		h, ok, err := a.Hold(ctx, d.Consumer, d.Group)
		if err != nil {
			return rec, err
		}
		next := h
		next.Held = append([]Held(nil), h.Held...)
		if ok && d.Group != "" && next.remove(Held{EventID: d.EventID, MessageID: d.MessageID}, nil) {
			w, err := holdWrite(a.table, h, next, versionCondition(h))
			if err != nil {
				return rec, err
			}
			items = append(items, w)
		}
		if len(items) == 0 {
			return rec, nil
		}
		_, err = a.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		var tce *types.TransactionCanceledException
		switch {
		case err == nil:
			return rec, nil
		case errors.As(err, &tce) && write && len(tce.CancellationReasons) > 0 &&
			aws.ToString(tce.CancellationReasons[0].Code) == "ConditionalCheckFailed":
			return rec, fmt.Errorf("event %s has a record of consumer %s (applied or decided meanwhile): %w", d.EventID, d.Consumer, ErrChanged)
		case errors.As(err, &tce) && attempt < 5: // the hold changed meanwhile: read it again
			continue
		}
		return rec, fmt.Errorf("discard %s: %w", rec.Key, err)
	}
}

func discardRecord(d Discard, now time.Time) (Record, error) {
	if d.Consumer == "" || (d.EventID == "" && d.MessageID == "") {
		return Record{}, errors.New("discard: a consumer and an event or message id are required")
	}
	if d.Retention <= 0 {
		d.Retention = DefaultRetention
	}
	attrs, err := json.Marshal(d.Attributes)
	if err != nil {
		return Record{}, fmt.Errorf("encode attributes: %w", err)
	}
	rec := Record{Key: Key(d.Consumer, d.EventID), Consumer: d.Consumer, EventID: d.EventID, ProcessedAt: rfc3339(now),
		Outcome: string(Discarded), Reason: truncate(d.Why, 1024), Operator: d.By, MessageID: d.MessageID, Group: d.Group,
		ExpiresAt: now.Add(d.Retention).Unix(), Payload: truncate(d.Body, MaxDiscardedBody)}
	if len(d.Attributes) > 0 {
		rec.Attributes = string(attrs)
	}
	if ev, err := cloudevent.Decode([]byte(d.Body)); err == nil {
		rec.EventType, rec.OccurredAt, rec.PayloadHash = ev.Type, rfc3339(ev.Time), ev.PayloadHash()
	}
	return rec, nil
}

// recordPut is the Put of rec conditional on no live record.
func recordPut(table string, rec Record, now time.Time) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode record %s: %w", rec.Key, err)
	}
	cond, err := absentCondition(now)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build record condition: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item, ConditionExpression: cond.Condition(),
		ExpressionAttributeNames: cond.Names(), ExpressionAttributeValues: cond.Values()}}, nil
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
