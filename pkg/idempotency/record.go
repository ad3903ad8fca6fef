package idempotency

import "time"

// Outcomes of processing one message. Applied and Rejected are stored in the record;
// the others are how a processing attempt ended.
const (
	Applied   Outcome = "applied"   // the effect and the record were committed together
	Rejected  Outcome = "rejected"  // an effect's own condition failed; the rejection is recorded
	Duplicate Outcome = "duplicate" // a record for this consumer and event exists: nothing written
	Conflict  Outcome = "conflict"  // a record exists for this event id with another payload
	Malformed Outcome = "malformed" // the message can never be processed as sent
	Failed    Outcome = "failed"    // transient failure, or an effect DynamoDB can never commit
	// Discarded is stored by an operator (Admin.Discard): the event is not to be applied; a
	// redelivery of it is a Duplicate whose Stored outcome says so.
	Discarded Outcome = "discarded"
)

// Outcome is how processing one message ended.
type Outcome string

// Record is the idempotency record: "consumer C processed event E", one item per consumer and
// event in the idempotency table, whose hash key is pk and whose TTL attribute is expiresAt.
type Record struct {
	Key            string `dynamodbav:"pk"`
	Consumer       string `dynamodbav:"consumer"`
	EventID        string `dynamodbav:"eventId"`
	EventType      string `dynamodbav:"eventType"`
	OccurredAt     string `dynamodbav:"occurredAt,omitempty"` // the event's time, RFC 3339
	ProcessedAt    string `dynamodbav:"processedAt"`          // RFC 3339, UTC
	Outcome        string `dynamodbav:"outcome"`              // applied or rejected
	Reason         string `dynamodbav:"reason,omitempty"`     // why it was rejected
	PayloadHash    string `dynamodbav:"payloadHash"`          // cloudevent.Event.PayloadHash
	MessageID      string `dynamodbav:"messageId"`            // the SQS message that was committed
	SequenceNumber string `dynamodbav:"sequenceNumber,omitempty"`
	ReceiveCount   int    `dynamodbav:"receiveCount,omitempty"`
	Group          string `dynamodbav:"messageGroup,omitempty"` // Delivery.Group
	ExpiresAt      int64  `dynamodbav:"expiresAt"`              // epoch seconds; expired records count as absent
	Payload        string `dynamodbav:"payload,omitempty"`      // the message body, when Config.StorePayload (and for Discarded)

	// Discarded only: who decided, and the letter's message attributes (a JSON object).
	Operator   string `dynamodbav:"operator,omitempty"`
	Attributes string `dynamodbav:"attributes,omitempty"`

	// Lease mode only (LeasedConsumer); empty on records of the transactional mode.
	Status         string `dynamodbav:"status,omitempty"`         // StatusInProgress or StatusCompleted
	Owner          string `dynamodbav:"owner,omitempty"`          // random token of the lease holder, or of who completed
	LeaseExpiresAt int64  `dynamodbav:"leaseExpiresAt,omitempty"` // epoch milliseconds; removed on completion

	origin string // Delivery.OriginID, for the group's hold; not stored
}

// held is the record's event as its group's held list knows it.
func (r Record) held() Held {
	return Held{EventID: r.EventID, MessageID: r.origin, PayloadHash: r.PayloadHash}
}

// Key is the idempotency key of event eventID for consumer: the record's pk, and what an
// effect outside DynamoDB passes downstream as its idempotency key.
func Key(consumer, eventID string) string { return consumer + keySeparator + eventID }

// KeyPrefixes returns the prefixes of the keys of every item the engine writes in the
// idempotency table for consumer: its records, its failure counts and its group holds. No
// other consumer's key starts with one of them, so an IAM policy can confine a consumer to its
// own items with a dynamodb:LeadingKeys condition of these prefixes followed by *.
func KeyPrefixes(consumer string) []string {
	return []string{Key(consumer, ""), attemptsKey(consumer, ""), holdKey(consumer, "")}
}

// AdminKeyPrefixes returns the prefixes of the keys an Admin reads and writes for consumer:
// KeyPrefixes, and the copies Discard keeps of a conflict's letter. An operator's policy
// confines the tool to the consumers it names with a dynamodb:LeadingKeys condition of these
// prefixes followed by *.
func AdminKeyPrefixes(consumer string) []string {
	return append(KeyPrefixes(consumer), discardedKey(consumer, ""))
}

// keySeparator separates the consumer name from the event id in a key; consumer names may not
// contain it, so no two consumer and event pairs share a key.
const keySeparator = "#"

// Attribute names of the record used in conditions.
const (
	attrKey       = "pk"
	attrExpiresAt = "expiresAt"
)

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
