// Package idempotency is the idempotent-consumer engine. A Handler turns an event into its
// effect, a list of DynamoDB writes; a Consumer commits that effect together with the record
// "consumer C processed event E" in one TransactWriteItems, the record guarded by a
// condition, and classifies what DynamoDB answers into an Outcome: applied, duplicate,
// rejected (an effect's own condition failed), conflict (same event id, other payload),
// malformed, or failed (transient, to be retried by redelivery).
//
// Effects outside DynamoDB (an HTTP call) run under a LeasedConsumer instead: a fenced lease
// on the record, claimed with a random owner token, completed or released only by that owner,
// taken over once expired; the effect gets the idempotency key to pass downstream.
package idempotency
