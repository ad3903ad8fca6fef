package idempotency

import (
	"time"

	"github.com/onceflow/onceflow/pkg/internal/engine"
)

// Outcome is how processing one message ended.
type Outcome string

// Outcomes of processing one message. Applied and Rejected are stored in the record;
// the others are how a processing attempt ended.
const (
	Applied   Outcome = "applied"   // the effect and the record were committed together
	Rejected  Outcome = "rejected"  // an effect's own condition failed; the rejection is recorded
	Duplicate Outcome = "duplicate" // a record for this consumer and event exists: nothing written
	Conflict  Outcome = "conflict"  // a record exists for this event id with another payload
	Malformed Outcome = "malformed" // the message can never be processed as sent
	Failed    Outcome = "failed"    // transient failure, or an effect DynamoDB can never commit
	// Ignored: an event of a type its Router routes nowhere (see NewRouter), or whose handler
	// decided an empty Effect without a Read. The message is acknowledged and nothing is
	// written, neither an effect nor a record.
	Ignored Outcome = "ignored"
	// Discarded is stored by an operator (operator.Admin.Discard): the event is not to be
	// applied; a redelivery of it is a Duplicate whose Stored outcome says so.
	Discarded Outcome = "discarded"
)

// Result says how applying one event ended.
type Result struct {
	Outcome Outcome
	Key     string // idempotency key (operator.Key); empty when the event had no usable id
	EventID string
	Reason  string        // the rejection reason, for Rejected (also for a duplicate of a rejection); why, for Ignored
	Stored  Outcome       // for Duplicate: the outcome stored by the first processing; empty when a write marked OrDuplicate recognised it
	Commit  time.Duration // time spent in DynamoDB calls
}

// resultOf is the engine's result as a consumer reads it (Consumer.Apply, lease.Consumer.Apply).
func resultOf(r engine.Result) Result {
	return Result{Outcome: Outcome(r.Outcome), Key: r.Key, EventID: r.EventID, Reason: r.Reason, Stored: Outcome(r.Stored), Commit: r.Commit}
}
