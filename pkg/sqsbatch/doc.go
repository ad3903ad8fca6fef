// Package sqsbatch is the SQS port of the engine: a Processor turns one Lambda SQS event into
// per-message calls and answers with a partial batch response, so only the messages that failed
// come back. On FIFO queues it keeps each message group in order and stops a group at its first
// failure; permanent failures go to a dead-letter queue with their reason, and a deadline guard
// stops starting work before the invocation runs out of time.
//
// NewConsumer is the common case in one call: an idempotent consumer (package idempotency)
// applying each message's event (a CloudEvent, or what Config.Decoder makes of it: see package
// envelope), behind a Processor that dead-letters what can never succeed. NewFor does the same
// for a consumer built separately (its Engine: a lease.Consumer's, say), and New runs any
// MessageHandler. The batch core (group order, concurrency, deadline guard, panic recovery,
// dead-lettering) is package batch, which the stream ports share.
package sqsbatch
