package ledger

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// Statuses of a movement, as its item and GET /accounts/{id}/movements/{reference} show them.
const (
	StatusPending  = "pending"  // accepted by the API, not yet decided by the ledger
	StatusApplied  = "applied"  // the balance and the entry were written
	StatusRejected = "rejected" // refused by the ledger, with a reason; never applied later
)

// Movement is a movement item: the business key (account, reference) of a credit or debit,
// written by the API with the movement's outbox event and kept for as long as the table
// (it has no expiry), and its status, set by the ledger consumer.
type Movement struct {
	PK          string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	Kind        string `dynamodbav:"kind"`
	EventID     string `dynamodbav:"eventId"`
	AccountID   string `dynamodbav:"accountId"`
	Reference   string `dynamodbav:"reference,omitempty"`
	Type        string `dynamodbav:"type"`
	Amount      int64  `dynamodbav:"amount"`
	PayloadHash string `dynamodbav:"payloadHash"`
	AcceptedAt  string `dynamodbav:"acceptedAt,omitempty"`
	Status      string `dynamodbav:"status"`
	Reason      string `dynamodbav:"reason,omitempty"`
	At          string `dynamodbav:"at,omitempty"`
}

// MovementKey is the key of the movement item of event eventID (see EventID: one per account
// and reference).
func MovementKey(eventID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "MOVEMENT#" + eventID},
		"sk": &types.AttributeValueMemberS{Value: "MOVEMENT"},
	}
}

// NewMovement is the pending movement item of ev (made by NewEvent), identified by reference.
func NewMovement(ev cloudevent.Event, reference string, amount int64) Movement {
	return Movement{PK: "MOVEMENT#" + ev.ID, SK: "MOVEMENT", Kind: "movement", EventID: ev.ID,
		AccountID: ev.Subject, Reference: reference, Type: entryType(ev.Type), Amount: amount,
		PayloadHash: ev.PayloadHash(), AcceptedAt: ev.Time.UTC().Format(time.RFC3339Nano), Status: StatusPending}
}

// WriteMovement returns the transaction write that records the pending movement of ev. It
// fails the transaction if the movement exists; with ALL_OLD the cancellation reason carries
// the stored item, whose PayloadHash tells a retry from another movement under the reference.
func WriteMovement(table string, ev cloudevent.Event, reference string, amount int64) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(NewMovement(ev, reference, amount))
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("marshal movement %s: %w", ev.ID, err)
	}
	cond, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("pk"))).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("movement condition: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item,
		ConditionExpression: cond.Condition(), ExpressionAttributeNames: cond.Names(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}, nil
}

// decided is the write that sets the movement of ev, a kind ("credit" or "debit"), to status
// (applied or rejected): only once, so a failure of its condition proves the event was decided
// before (OrDuplicate). An event that reaches the ledger without a movement item (published
// before movements were recorded) gets one, without its reference.
func decided(table string, ev cloudevent.Event, d MovementData, kind, status, reason string) idempotency.Write {
	set := expression.Set(expression.Name("status"), expression.Value(status)).
		Set(expression.Name("at"), expression.Value(ev.Time.UTC().Format(time.RFC3339Nano))).
		Set(expression.Name("kind"), expression.Value("movement")).
		Set(expression.Name("eventId"), expression.Value(ev.ID)).
		Set(expression.Name("accountId"), expression.Value(d.AccountID)).
		Set(expression.Name("type"), expression.Value(kind)).
		Set(expression.Name("amount"), expression.Value(d.Amount)).
		Set(expression.Name("payloadHash"), expression.Value(ev.PayloadHash()))
	if reason != "" {
		set = set.Set(expression.Name("reason"), expression.Value(reason))
	}
	undecided := expression.Name("status").AttributeNotExists().
		Or(expression.Name("status").Equal(expression.Value(StatusPending)))
	return idempotency.Update(table, MovementKey(ev.ID), set).If(undecided).OrDuplicate()
}

// entryType is the entry and movement type of an event type.
func entryType(eventType string) string {
	if eventType == Debited {
		return "debit"
	}
	return "credit"
}
