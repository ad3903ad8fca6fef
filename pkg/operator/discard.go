package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// Discard is what an operator discards: a dead letter's event, for one consumer.
type Discard struct {
	Consumer  string
	EventID   string // "" when the letter has no usable event id: only the hold changes
	MessageID string // the letter's message id on its source queue (SQS keeps it), for the hold
	Group     string // its group, whose hold it leaves
	Body      string // kept in the record, cut to MaxDiscardedBody bytes
	// PayloadHash is the payload hash the consumer's own decoder gave the letter's event
	// (deadletter.Letter.PayloadHash). Empty: Body is hashed as a CloudEvent, and a body that
	// is not one gives the record no hash.
	PayloadHash string
	// Attributes are the letter's message attributes (and its trace header), kept in the
	// record as a JSON object.
	Attributes map[string]string
	By, Why    string        // who decides, and why
	Retention  time.Duration // how long the record answers a redelivery; default idempotency.DefaultRetention
}

// MaxDiscardedBody bounds the copy of a discarded letter's body kept in its record.
const MaxDiscardedBody = 64 << 10

// Discard records that d's event is not to be applied by d's consumer (the outcome
// idempotency.Discarded, with who, why, when, the body and attributes), so that a redelivery
// of it is answered as a duplicate and never applied, and in the same transaction takes it off
// its group's held list, wherever it is, so that the messages held behind it go on in order. A
// letter whose event the consumer has decided already (applied, rejected or discarded, with
// the letter's payload) is a copy of a decided event: nothing is recorded, only the hold
// changes, and Discard returns the record with a *DecidedError
// (ErrDecided), so that the caller deletes the letter, which a redrive would only
// answer as a duplicate. A letter whose event id has a record of another payload (a conflict)
// keeps that record, which answers a redelivery of the letter as a conflict again: only the
// hold changes, and the letter's copy is kept beside it (DiscardedCopy finds it; a later
// conflict discarded for the same event id replaces it). A letter without an event id (a body
// that is not an event) is recorded as discarded by its message (the id it was first sent as,
// in its group), which answers its redelivery before it holds its group again. It returns the
// record that answers a redelivery, and is refused (ErrChanged) when the event was
// applied or decided while it ran. Deleting the letter from the dead-letter queue is the
// caller's next step.
func (a *Admin) Discard(ctx context.Context, d Discard) (Record, error) {
	now := time.Now()
	rec, err := discardRecord(d, now)
	if err != nil {
		return rec, err
	}
	letter := rec.PayloadHash // the letter's payload, which its held entry carries
	write := d.EventID != "" || d.MessageID != "" && d.Group != ""
	var copied Record         // the letter's copy when the event's record is another payload's
	var decided *DecidedError // the event's decision, when it has one already
	var byMessage Record      // a conflict's discard, recorded by its message too
	if d.EventID == "" && write {
		// No event id: the decision is recorded by the message (table.MessageKey), which its group's
		// consumer checks before it holds the message again.
		rec.Key = table.MessageKey(d.Consumer, d.Group, d.MessageID)
		var old Record
		switch ok, err := a.get(ctx, rec.Key, &old); {
		case err != nil:
			return rec, err
		case ok && old.ExpiresAt >= now.Unix():
			decided = &DecidedError{Key: old.Key, Outcome: idempotency.Outcome(old.Outcome), Reason: old.Reason}
			rec, write = old, false
		}
	}
	if write && d.EventID != "" {
		old, ok, err := a.Record(ctx, d.Consumer, d.EventID)
		switch {
		case err != nil:
			return rec, err
		case ok && table.Decides(old.row(), letter, now):
			decided = &DecidedError{Key: old.Key, Outcome: idempotency.Outcome(old.Outcome), Reason: old.Reason}
			rec, write = old, false
		case ok && old.ExpiresAt >= now.Unix() && old.PayloadHash != letter:
			copied = rec // a conflict: the applied event's record stays, the letter's copy beside it
			copied.Key = table.DiscardedKey(d.Consumer, d.EventID)
			if d.MessageID != "" && d.Group != "" {
				// and the message is recorded as discarded, which answers its redelivery: the
				// event's record, another payload's, would hold the group behind it again
				byMessage = copied
				byMessage.Key = table.MessageKey(d.Consumer, d.Group, d.MessageID)
			}
			rec, write = old, false
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
		if copied.Key != "" {
			item, err := attributevalue.MarshalMap(copied)
			if err != nil {
				return rec, fmt.Errorf("encode the copy of %s: %w", rec.Key, err)
			}
			items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(a.table), Item: item}})
		}
		if byMessage.Key != "" {
			item, err := attributevalue.MarshalMap(byMessage)
			if err != nil {
				return rec, fmt.Errorf("encode %s: %w", byMessage.Key, err)
			}
			items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(a.table), Item: item}})
		}
		if d.Group != "" {
			w, err := a.leaveHold(ctx, d, letter)
			if err != nil {
				return rec, err
			}
			items = append(items, w...)
		}
		if len(items) == 0 {
			return rec, decidedOrNil(decided)
		}
		_, err = a.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		var tce *types.TransactionCanceledException
		switch {
		case err == nil:
			return rec, decidedOrNil(decided)
		case errors.As(err, &tce) && write && len(tce.CancellationReasons) > 0 &&
			aws.ToString(tce.CancellationReasons[0].Code) == "ConditionalCheckFailed":
			return rec, fmt.Errorf("%s has a record of consumer %s (applied or decided meanwhile): %w", rec.Key, d.Consumer, ErrChanged)
		case errors.As(err, &tce) && attempt < 5: // the hold changed meanwhile: read it again
			continue
		}
		return rec, fmt.Errorf("discard %s: %w", rec.Key, err)
	}
}

// decidedOrNil is de as an error, nil when it is nil.
func decidedOrNil(de *DecidedError) error {
	if de == nil {
		return nil
	}
	return de
}

// leaveHold is the writes that take d's message (its payload hash: hash) off its group's held
// list, conditional on the hold as read; none when the message is not held.
func (a *Admin) leaveHold(ctx context.Context, d Discard, hash string) ([]types.TransactWriteItem, error) {
	h, err := a.hold(ctx, d.Consumer, d.Group)
	if err != nil || !holdlist.Holds(h) {
		return nil, err
	}
	next := holdlist.Clone(h)
	if !holdlist.Remove(&next, holdlist.Held{EventID: d.EventID, MessageID: d.MessageID, PayloadHash: hash}) {
		return nil, nil
	}
	return holdlist.Writes(a.table, h, next, holdlist.VersionCondition(h), time.Now())
}

func discardRecord(d Discard, now time.Time) (Record, error) {
	if d.Consumer == "" || (d.EventID == "" && d.MessageID == "") {
		return Record{}, errors.New("discard: a consumer and an event or message id are required")
	}
	if d.Retention <= 0 {
		d.Retention = idempotency.DefaultRetention
	}
	attrs, err := json.Marshal(d.Attributes)
	if err != nil {
		return Record{}, fmt.Errorf("encode attributes: %w", err)
	}
	rec := Record{Key: Key(d.Consumer, d.EventID), Consumer: d.Consumer, EventID: d.EventID, ProcessedAt: table.RFC3339(now),
		Outcome: string(idempotency.Discarded), Reason: table.Truncate(d.Why, 1024), Operator: d.By, MessageID: d.MessageID, Group: d.Group,
		ExpiresAt: now.Add(d.Retention).Unix(), Payload: table.Truncate(d.Body, MaxDiscardedBody)}
	if d.EventID == "" {
		rec.Key = "" // no event id: Discard records it by its message, when it has a group
	}
	if len(d.Attributes) > 0 {
		rec.Attributes = string(attrs)
	}
	if ev, err := cloudevent.Decode([]byte(d.Body)); err == nil {
		rec.EventType, rec.OccurredAt, rec.PayloadHash = ev.Type, table.RFC3339(ev.Time), ev.PayloadHash()
	}
	if d.PayloadHash != "" { // the consumer's own: its decoder may not read the body as a CloudEvent
		rec.PayloadHash = d.PayloadHash
	}
	return rec, nil
}

// recordPut is the Put of rec conditional on no live record.
func recordPut(tableName string, rec Record, now time.Time) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode record %s: %w", rec.Key, err)
	}
	cond, err := table.AbsentCondition(now)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build record condition: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(tableName), Item: item, ConditionExpression: cond.Condition(),
		ExpressionAttributeNames: cond.Names(), ExpressionAttributeValues: cond.Values()}}, nil
}

// DiscardedCopy returns the copy of the letter last discarded for consumer's event eventID
// while the event's record was another payload's (a conflict): what Discard kept of it (the
// outcome idempotency.Discarded, who, why, when, the body and attributes). ok is false when
// there is none.
func (a *Admin) DiscardedCopy(ctx context.Context, consumer, eventID string) (rec Record, ok bool, err error) {
	ok, err = a.get(ctx, table.DiscardedKey(consumer, eventID), &rec)
	return rec, ok, err
}
