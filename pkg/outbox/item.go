package outbox

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/publish"
)

// Kind is the kind attribute of outbox items.
const Kind = "outbox"

// Retention is how long an outbox item stays in the table after it is written: longer than the
// stream's 24-hour retention, so the relay always finds it.
const Retention = 7 * 24 * time.Hour

// Item is an outbox item as stored in the service's table.
type Item struct {
	PK          string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	Kind        string `dynamodbav:"kind"`
	EventID     string `dynamodbav:"eventId"`
	EventType   string `dynamodbav:"eventType"`
	Subject     string `dynamodbav:"subject"`
	Body        string `dynamodbav:"body"`
	PayloadHash string `dynamodbav:"payloadHash"`
	CreatedAt   string `dynamodbav:"createdAt"`
	ExpiresAt   int64  `dynamodbav:"expiresAt"`
	// TraceHeader is the X-Ray trace header of the request that wrote the event (see package
	// xray); the Relay sends it as the message's AWSTraceHeader. Absent when not traced.
	TraceHeader string `dynamodbav:"traceHeader,omitempty"`
}

// PutOption sets an optional part of the outbox item Write builds.
type PutOption func(*Item)

// WithTrace stores the trace header h with the item, so that the message the Relay sends for
// it carries the trace of the request that wrote it. Pass xray.FromContext(ctx) of the
// request's handler; an empty h stores nothing.
func WithTrace(h string) PutOption {
	return func(it *Item) { it.TraceHeader = h }
}

// Key returns the primary key of the outbox item of the event eventID about the aggregate
// subject. Every outbox item of one aggregate shares the partition key OUTBOX#<subject>, so
// their stream records are in one shard, in the order they were written; the sort key tells
// the events apart.
func Key(subject, eventID string) map[string]types.AttributeValue {
	pk, sk := keyOf(subject, eventID)
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

func keyOf(subject, eventID string) (pk, sk string) { return "OUTBOX#" + subject, "EVENT#" + eventID }

// NewItem builds the outbox item of ev, written at now. Its body is the CloudEvents JSON of ev
// with every character SQS refuses, and every character beyond U+FFFF, written as a JSON \u
// escape: it decodes to the same event and is always sendable.
func NewItem(ev cloudevent.Event, now time.Time) (Item, error) {
	if ev.ID == "" || ev.Subject == "" || ev.Type == "" {
		return Item{}, fmt.Errorf("outbox item: event id, type and subject are required")
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		return Item{}, err
	}
	pk, sk := keyOf(ev.Subject, ev.ID)
	return Item{PK: pk, SK: sk, Kind: Kind, EventID: ev.ID, EventType: ev.Type,
		Subject: ev.Subject, Body: string(safeJSON(body)), PayloadHash: ev.PayloadHash(),
		CreatedAt: now.UTC().Format(time.RFC3339Nano), ExpiresAt: now.Add(Retention).Unix()}, nil
}

// Put returns the transaction write that records ev in table's outbox, at now. It fails the
// transaction if the event id is already in the outbox under the same subject (the condition
// is on the item's full key, so it is per event); with ALL_OLD the cancellation reason
// carries the stored item, whose PayloadHash tells a retry from a conflicting reuse.
func Put(table string, ev cloudevent.Event, now time.Time, opts ...PutOption) (types.TransactWriteItem, error) {
	item, err := NewItem(ev, now)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	for _, o := range opts {
		o(&item)
	}
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("marshal outbox item %s: %w", ev.ID, err)
	}
	cond, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("pk"))).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("outbox condition: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(table), Item: av,
		ConditionExpression:                 cond.Condition(),
		ExpressionAttributeNames:            cond.Names(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil
}

// message is the SQS message of the item, as the Relay and Republish send it: the event id as
// deduplication id, the subject as group id, and the trace of the request that wrote it.
func (it Item) message() publish.Message {
	return publish.Message{DedupID: it.EventID, GroupID: it.Subject, Body: it.Body, TraceHeader: it.TraceHeader}
}
