// Package idempotency is the idempotent consumer: it applies each event's effect to DynamoDB
// exactly once. A Handler decides the effect of an event as data, a list of writes made with
// Put, Update, Delete and Check; a Consumer commits them together with the record "consumer C
// processed event E" in one TransactWriteItems, the record guarded by a condition, and
// classifies DynamoDB's answer into an Outcome: applied, duplicate, rejected (an effect's own
// condition failed, recorded with its business reason), conflict (same event id, other
// payload), malformed, ignored (a type its Router routes nowhere: nothing written), or failed
// (transient, to be delivered again).
//
// Consumer.Apply takes one decoded event, whatever brought it (a stream, Kinesis,
// EventBridge); package sqsbatch puts it behind an SQS event source in one call.
//
// One rule says what is never retried: an error marked with Permanent (IsPermanent reports
// it). Such a message is dead-lettered with the error as its reason; everything else is
// retried.
//
// Effects outside DynamoDB (an HTTP call) run under a LeasedConsumer instead: a fenced lease
// on the record, claimed with a random owner token, completed or released only by that owner,
// taken over once expired; the effect gets the idempotency key to pass downstream.
//
// What the engine keeps (a consumer's record of an event, its count of the event's failed
// attempts, a group held behind a dead letter) is read and decided on by an operator through
// package operator, not this one.
package idempotency
