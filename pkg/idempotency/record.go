package idempotency

import (
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// Outcomes of processing one message. Applied and Rejected are stored in the record;
// the others are how a processing attempt ended.
const (
	Applied   Outcome = "applied"   // the effect and the record were committed together
	Rejected  Outcome = "rejected"  // an effect's own condition failed; the rejection is recorded
	Duplicate Outcome = "duplicate" // a record for this consumer and event exists: nothing written
	Conflict  Outcome = "conflict"  // a record exists for this event id with another payload
	Malformed Outcome = "malformed" // the message can never be processed as sent
	Failed    Outcome = "failed"    // transient failure, or an effect DynamoDB can never commit
	// Discarded is stored by an operator (operator.Admin.Discard): the event is not to be
	// applied; a redelivery of it is a Duplicate whose Stored outcome says so.
	Discarded Outcome = "discarded"
)

// Outcome is how processing one message ended.
type Outcome string

// Record is the idempotency record: "consumer C processed event E", one item per consumer and
// event in the idempotency table, whose hash key is pk and whose TTL attribute is expiresAt.
// Its fields are the item's attributes: Key (pk: Key(consumer, eventID)), Consumer, EventID,
// EventType; OccurredAt (the event's time) and ProcessedAt, RFC 3339 in UTC; Outcome (applied,
// rejected, or Discarded by an operator) and Reason (a rejection's business reason, a
// discard's why); PayloadHash (cloudevent.Event.PayloadHash: the same event id with another
// payload is a Conflict); MessageID, SequenceNumber, ReceiveCount and Group, of the delivery
// that was committed; ExpiresAt, in epoch seconds (an expired record counts as absent, whether
// or not TTL has deleted it); Payload, the message body when Config.StorePayload (and a
// discarded letter's). A discard also keeps Operator (who decided) and Attributes (the
// letter's message attributes, a JSON object); the lease mode (LeasedConsumer) keeps Status
// (StatusInProgress or StatusCompleted), Owner (the random token of the lease holder, or of
// who completed) and LeaseExpiresAt (epoch milliseconds, removed on completion). An operator
// reads one with operator.Admin.Record.
type Record = table.Record

// heldOf is rec's event as its group's held list knows it.
func heldOf(rec Record) holdlist.Held {
	return holdlist.Held{EventID: rec.EventID, MessageID: table.Origin(rec), PayloadHash: rec.PayloadHash}
}

// Key is the idempotency key of event eventID for consumer: the record's pk, and what an
// effect outside DynamoDB passes downstream as its idempotency key.
func Key(consumer, eventID string) string { return table.Key(consumer, eventID) }

// KeyPrefixes returns the prefixes of the keys of every item the engine writes in the
// idempotency table for consumer: its records, its failure counts and its group holds. No
// other consumer's key starts with one of them, so an IAM policy can confine a consumer to its
// own items with a dynamodb:LeadingKeys condition of these prefixes followed by *.
func KeyPrefixes(consumer string) []string {
	return []string{Key(consumer, ""), table.AttemptsKey(consumer, ""), table.HoldKey(consumer, "")}
}
