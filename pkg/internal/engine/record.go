package engine

import (
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// Outcome is idempotency.Outcome, how processing one message ended; the values are its.
type Outcome string

// The outcomes (idempotency.Applied, ...).
const (
	Applied, Rejected, Duplicate, Conflict Outcome = "applied", "rejected", "duplicate", "conflict"
	Malformed, Failed, Discarded           Outcome = "malformed", "failed", "discarded"
	Ignored                                Outcome = "ignored"
)

// heldOf is rec's event as its group's held list knows it.
func heldOf(rec table.Record) holdlist.Held {
	return holdlist.Held{EventID: rec.EventID, MessageID: table.Origin(rec), PayloadHash: rec.PayloadHash}
}
