// Package holdlist is a group's hold in the idempotency table: the ordered list of the
// group's held messages, spread over the hold's own item and its overflow pages, the changes
// the consumer and an operator make to it, and the conditional writes that store a change
// only over the hold as it was read. Its types are the public operator.Hold, Held and
// Decision; its functions are the consumer's (pkg/idempotency) and the operator's
// (pkg/operator) alone.
package holdlist
