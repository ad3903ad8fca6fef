// Package publish sends events to SQS FIFO queues for services that publish directly, without
// an outbox, and for the outbox relay. Every message carries the event id as its
// MessageDeduplicationId and the event subject as its MessageGroupId, so a retried send, by
// this package or by its caller, is dropped by the queue within the 5-minute deduplication
// window and stopped by the idempotent consumer after it.
package publish
