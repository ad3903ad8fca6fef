// Package lease is the idempotent consumer for effects outside DynamoDB (an HTTP call, an
// e-mail): a fenced lease on the event's record. A delivery claims the record with a random
// owner token; completion and release are conditional on that token, so a late or lost owner
// can never overwrite or delete another's record; an expired lease can be taken over. The
// effect gets the idempotency key to pass downstream, so that a receiver can drop the repeat a
// crash between the call and its completion makes unavoidable.
//
// A Consumer shares its configuration, its record and its port contract with
// idempotency.Consumer, whose effects are DynamoDB writes committed with the record.
package lease
