package engine

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

// heldOf is rec's event as its group's held list knows it.
func heldOf(rec table.Record) holdlist.Held {
	return holdlist.Held{EventID: rec.EventID, MessageID: table.Origin(rec), PayloadHash: rec.PayloadHash}
}
