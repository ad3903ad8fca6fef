// Package port is the contract between a port (a source of events: an SQS queue, a DynamoDB
// stream, a Kinesis stream, one of your own) and the engine that applies them exactly once.
// A consumer gives a port its Engine (idempotency.Consumer.Engine, lease.Consumer.Engine); the
// port begins one Batch per batch of its transport and does what each answer says:
// acknowledge, deliver again, or dead-letter. Counting failed attempts, holding ordered groups
// and packing commits are the engine's.
//
// A consumer author needs none of this: packages sqsbatch, dynamodbbatch and kinesisbatch are
// ports. It is for writing a port of your own, as go-cloud's driver packages are for writing a
// driver.
package port
