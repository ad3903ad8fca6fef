package idempotency

import (
	"slices"

	"github.com/onceflow/onceflow/pkg/internal/engine"
)

// Limits of one TransactWriteItems call. The record takes one of the 100 items.
const (
	MaxEffectWrites    = 99
	MaxTransactionSize = 4 << 20
)

// OrDuplicate says that a failure of the write's condition proves the event's effect was
// applied before: the event is then a Duplicate (Result.Stored empty), nothing is written and
// no record is added. It is the second line of defence behind the record, for when the record
// has expired (Config.Retention) and the event is delivered again: make the write that
// creates an item keyed by the event conditional on the item being new, and mark it:
//
//	idempotency.Put(table, entry).If(expression.AttributeNotExists(expression.Name("pk"))).OrDuplicate()
//
// When several conditions fail at once, one marked OrDuplicate wins over OrReject: an event
// applied before is never rejected on its redelivery. Put such writes first in the effect.
func (w Write) OrDuplicate() Write {
	w.duplicate = true
	return w
}

// OnReject adds writes that are committed, in one transaction with the rejection record, when
// the write's condition fails and the event is rejected: the place to record a business
// rejection where readers of the application's tables see it (a status "rejected" on the
// request), since the record expires. The writes are checked with the effect; their own
// conditions may use OrDuplicate, and any other failed condition among them makes the effect
// invalid (ErrInvalidEffect). An OnReject of a write given to OnReject is refused.
func (w Write) OnReject(writes ...Write) Write {
	w.onReject = append(slices.Clone(w.onReject), writes...)
	return w
}

// compile is the effect as the engine commits it: each write as the SDK's item (or its
// error), with its reason, its OrDuplicate and its OnReject writes.
func (e Effect) compile() engine.Effect {
	if e == nil {
		return nil
	}
	out := make(engine.Effect, len(e))
	for i, w := range e {
		item, err := w.TransactWriteItem()
		out[i] = engine.Write{Item: item, Err: err, Reason: w.reason, Duplicate: w.duplicate, OnReject: Effect(w.onReject).compile()}
	}
	return out
}
