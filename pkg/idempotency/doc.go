// Package idempotency is the idempotent consumer: it applies each event's effect to DynamoDB
// exactly once. A Handler decides the effect of an event as data, a list of writes made with
// Put, Update, Delete and Check; a Consumer commits them together with the record "consumer C
// processed event E" in one TransactWriteItems, the record guarded by a condition, and
// classifies DynamoDB's answer into an Outcome: applied, duplicate, rejected (an effect's own
// condition failed, recorded with its business reason), conflict (same event id, other
// payload), malformed, ignored (a type its Router routes nowhere: nothing written), or failed
// (transient, to be delivered again).
//
// A port delivers the events: sqsbatch.NewConsumer puts a Consumer behind an SQS event source
// in one call, and sqsbatch, dynamodbbatch and kinesisbatch take its Engine. Consumer.Apply
// takes one decoded event from a transport of your own.
//
// One rule says what is never retried: an error marked with Permanent (IsPermanent reports
// it). Such a message is dead-lettered with the error as its reason; everything else is
// retried.
//
// A handler that decides from items it reads reads them with Read: the effect is committed
// only if they are unchanged, and the event is decided again when a concurrent writer changed
// one.
//
// The rest of the engine has rooms of its own: effects outside DynamoDB (an HTTP call) run
// under package lease, a port of your own is written on package port, and an operator reads
// and decides on what the engine keeps (records, failure counts, held groups) with package
// operator.
package idempotency
