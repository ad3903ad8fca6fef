package idempotency

import "github.com/onceflow/onceflow/pkg/internal/holdlist"

// Hold is a group held under HoldGroup, one per consumer and group in the idempotency table.
// Held lists the group's messages dead-lettered while it is held, in the group's order; its
// head is the blocker, which BlockerEventID, BlockerMessage, BlockerReason and HeldAt (RFC
// 3339) describe. Each message of the list is applied only once every message before it has
// been applied, rejected, discarded or skipped, and the hold goes with the last one. Skipped
// are the blockers an operator let the group go on past (operator.Admin.SkipBlocker): none of
// them holds the group again, and each is kept until DefaultRetention after the skip; once
// nothing is held and only skips are kept, ExpiresAt is set and TTL deletes the item. The list
// spreads over as many items as it needs: the hold's own item (Key, the one a commit checks)
// keeps its first entries, and overflow pages (under the same key prefix, KeyPrefixes) the
// rest, in the order Pages lists them; Held is the whole list once read by
// operator.Admin.Hold. Version counts the hold's changes: every write of the hold, and of its
// pages, is conditional on the version it read.
type Hold = holdlist.Hold

// Held is one dead-lettered message of a held group (Hold.Held).
type Held = holdlist.Held

// Decision is an operator's decision about a held message (Hold.Skipped, SkippedError): the
// message (Held), who decided (By), why (Why) and when (At, RFC 3339).
type Decision = holdlist.Decision
