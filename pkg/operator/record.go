package operator

import (
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// Record is the idempotency record: "consumer C processed event E", one item per consumer and
// event in the idempotency table, whose hash key is pk and whose TTL attribute is expiresAt.
// Its fields are the item's attributes. An expired record counts as absent, whether or not TTL
// has deleted it. An operator reads one with Admin.Record.
type Record struct {
	Key            string `dynamodbav:"pk"`                   // Key(consumer, eventID)
	Consumer       string `dynamodbav:"consumer"`             // the consumer's name
	EventID        string `dynamodbav:"eventId"`              // the event's id
	EventType      string `dynamodbav:"eventType"`            // the event's type
	OccurredAt     string `dynamodbav:"occurredAt,omitempty"` // the event's time, RFC 3339
	ProcessedAt    string `dynamodbav:"processedAt"`          // RFC 3339, UTC
	Outcome        string `dynamodbav:"outcome"`              // applied, rejected, or discarded by an operator
	Reason         string `dynamodbav:"reason,omitempty"`     // a rejection's business reason, a discard's why
	PayloadHash    string `dynamodbav:"payloadHash"`          // cloudevent.Event.PayloadHash: the same id with another payload is a conflict
	MessageID      string `dynamodbav:"messageId"`            // the delivery that was committed
	SequenceNumber string `dynamodbav:"sequenceNumber,omitempty"`
	ReceiveCount   int    `dynamodbav:"receiveCount,omitempty"`
	Group          string `dynamodbav:"messageGroup,omitempty"` // the delivery's ordered group (port.Delivery.Group)
	ExpiresAt      int64  `dynamodbav:"expiresAt"`              // epoch seconds
	Payload        string `dynamodbav:"payload,omitempty"`      // the message, when idempotency.Config.StorePayload (and a discarded letter's)

	// A discard only: who decided, and the letter's message attributes (a JSON object).
	Operator   string `dynamodbav:"operator,omitempty"`
	Attributes string `dynamodbav:"attributes,omitempty"`

	// The lease mode only (package lease); empty on records of the transactional mode.
	Status         string `dynamodbav:"status,omitempty"`         // StatusInProgress or StatusCompleted
	Owner          string `dynamodbav:"owner,omitempty"`          // the random token of the lease holder, or of who completed
	LeaseExpiresAt int64  `dynamodbav:"leaseExpiresAt,omitempty"` // epoch milliseconds; removed on completion
}

// Status of a record the lease mode wrote (Record.Status).
const (
	StatusInProgress = "in-progress" // an owner holds the lease and is running the effect
	StatusCompleted  = "completed"   // the effect ran; Outcome says how
)

// row is r as the engine reads a record.
func (r Record) row() table.Record {
	return table.Record{Key: r.Key, Consumer: r.Consumer, EventID: r.EventID, EventType: r.EventType, OccurredAt: r.OccurredAt,
		ProcessedAt: r.ProcessedAt, Outcome: r.Outcome, Reason: r.Reason, PayloadHash: r.PayloadHash, MessageID: r.MessageID,
		SequenceNumber: r.SequenceNumber, ReceiveCount: r.ReceiveCount, Group: r.Group, ExpiresAt: r.ExpiresAt, Payload: r.Payload,
		Operator: r.Operator, Attributes: r.Attributes, Status: r.Status, Owner: r.Owner, LeaseExpiresAt: r.LeaseExpiresAt}
}

// Key is the idempotency key of event eventID for consumer: its record's pk, and what an
// effect outside DynamoDB passes downstream as its idempotency key (lease.SideEffect).
func Key(consumer, eventID string) string { return table.Key(consumer, eventID) }

// KeyPrefixes returns the prefixes of the keys of every item the engine writes in the
// idempotency table for consumer: its records, its failure counts and its group holds. No
// other consumer's key starts with one of them, so an IAM policy can confine a consumer to its
// own items with a dynamodb:LeadingKeys condition of these prefixes followed by *.
func KeyPrefixes(consumer string) []string {
	return []string{Key(consumer, ""), table.AttemptsKey(consumer, ""), table.HoldKey(consumer, "")}
}

// AdminKeyPrefixes returns the prefixes of the keys an Admin reads and writes for consumer:
// KeyPrefixes, and the copies Discard keeps of a conflict's letter. An operator's policy
// confines the tool to the consumers it names with a dynamodb:LeadingKeys condition of these
// prefixes followed by *.
func AdminKeyPrefixes(consumer string) []string {
	return append(KeyPrefixes(consumer), table.DiscardedKey(consumer, ""))
}
