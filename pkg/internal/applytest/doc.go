// Package applytest is the fixture the tests of the idempotent consumer (pkg/idempotency) and
// of the lease mode (pkg/lease) share: a table of counters and an idempotency table on
// DynamoDB Local, a router whose events add to a counter (applying one twice shows), SQS
// messages carrying those events, a downstream receiver for the lease mode's side effect, and
// the malformed events both consumers refuse before any call.
package applytest
