// Package operator is the operator's API to what the engine keeps in an idempotency table: an
// Admin reads a consumer's record of an event, its count of the event's failed attempts and a
// group's hold (Record, Attempts, Hold), and makes an operator's decisions about them (discard
// a dead letter, skip a hold's blocker, release a hold, delete a record). Each decision is
// written conditionally on what the operator was shown, so that nothing changed meanwhile is
// decided unseen (ErrChanged); the onceflow tool (cmd/onceflow) is built on it, and a consumer
// needs none of it (package idempotency).
package operator
