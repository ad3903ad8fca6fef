package operator

import (
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/port"
)

// Hold is a group held under idempotency.HoldGroup, one per consumer and group in the
// idempotency table; its fields are the hold's attributes. Held lists the group's messages
// dead-lettered while it is held, in the group's order; its head is the blocker, which the
// Blocker fields describe. Each message of the list is applied only once every message before
// it has been applied, rejected, discarded or skipped, and the hold goes with the last one. The
// list spreads over as many items as it needs: the hold's own item (Key, the one a commit
// checks) keeps its first entries, and overflow pages (under the same key prefix, KeyPrefixes)
// the rest, in the order Pages lists them; Held is the whole list once read by Admin.Hold.
// Version counts the hold's changes: every write of the hold, and of its pages, is conditional
// on the version it read. A Hold an Admin returned remembers how it was read, so that a
// decision on it (Admin.SkipBlocker, Admin.ReleaseHoldIf) is written over the hold as shown.
type Hold struct {
	Key            string      `dynamodbav:"pk"`
	Consumer       string      `dynamodbav:"consumer"`
	Group          string      `dynamodbav:"group"`
	BlockerEventID string      `dynamodbav:"blockerEventId"`   // the head's event id
	BlockerMessage string      `dynamodbav:"blockerMessageId"` // the head's message id
	BlockerReason  string      `dynamodbav:"blockerReason"`    // why the head was dead-lettered
	HeldAt         string      `dynamodbav:"heldAt"`           // when the head was held, RFC 3339
	Held           []port.Held `dynamodbav:"held"`             // the list, in order
	// Skipped are the blockers an operator let the group go on past (Admin.SkipBlocker): none
	// of them holds the group again, and each is kept until idempotency.DefaultRetention after
	// the skip.
	Skipped []Decision `dynamodbav:"skipped,omitempty"`
	Pages   []int      `dynamodbav:"pages,omitempty"` // the overflow pages, in the list's order
	Version int64      `dynamodbav:"version"`
	// ExpiresAt is set once nothing is held any more and only Skipped is kept: the item then
	// holds nothing, and TTL deletes it in time.
	ExpiresAt int64 `dynamodbav:"expiresAt,omitempty"`

	read readState // how an Admin read it
}

// readState is what a hold an Admin read knows beside its attributes (holdlist.State).
type readState struct {
	exists, loaded bool
	entryPages     []int
}

// Decision is an operator's decision about a held message (Hold.Skipped): the message, who
// decided (By), why (Why) and when (At, RFC 3339).
type Decision struct {
	port.Held
	By  string `dynamodbav:"by"`
	Why string `dynamodbav:"why"`
	At  string `dynamodbav:"at"`
}

// holdOf is h, as the engine's hold list reads it, as an operator is shown it.
func holdOf(h holdlist.Hold) Hold {
	out := Hold{Key: h.Key, Consumer: h.Consumer, Group: h.Group, BlockerEventID: h.BlockerEventID, BlockerMessage: h.BlockerMessage,
		BlockerReason: h.BlockerReason, HeldAt: h.HeldAt, Pages: h.Pages, Version: h.Version, ExpiresAt: h.ExpiresAt}
	out.read.exists, out.read.loaded, out.read.entryPages = holdlist.State(h)
	if h.Held != nil {
		out.Held = make([]port.Held, len(h.Held))
		for i, e := range h.Held {
			out.Held[i] = e.Port()
		}
	}
	if h.Skipped != nil {
		out.Skipped = make([]Decision, len(h.Skipped))
		for i, d := range h.Skipped {
			out.Skipped[i] = Decision{Held: d.Port(), By: d.By, Why: d.Why, At: d.At}
		}
	}
	return out
}

// list is h as the engine's hold list changes it: as it was read, when an Admin read it.
func (h Hold) list() holdlist.Hold {
	out := holdlist.Hold{Key: h.Key, Consumer: h.Consumer, Group: h.Group, BlockerEventID: h.BlockerEventID, BlockerMessage: h.BlockerMessage,
		BlockerReason: h.BlockerReason, HeldAt: h.HeldAt, Pages: h.Pages, Version: h.Version, ExpiresAt: h.ExpiresAt}
	if h.Held != nil {
		out.Held = make([]holdlist.Held, len(h.Held))
		for i, e := range h.Held {
			out.Held[i] = holdlist.FromPort(e)
		}
	}
	if h.Skipped != nil {
		out.Skipped = make([]holdlist.Decision, len(h.Skipped))
		for i, d := range h.Skipped {
			out.Skipped[i] = holdlist.Decision{Held: holdlist.FromPort(d.Held), By: d.By, Why: d.Why, At: d.At}
		}
	}
	return holdlist.WithState(out, h.read.exists, h.read.loaded, h.read.entryPages)
}
