package batch

import "time"

// Options are the settings every port shares: each port's Config embeds them
// (sqsbatch.Config, dynamodbbatch.Config, kinesisbatch.Config). The zero value works.
type Options struct {
	// Concurrency is how many groups (a FIFO queue's message groups, a stream's keys; of a
	// standard queue, messages) are processed at once. Default DefaultConcurrency. A packing
	// port (see NoPacking) runs at least port.PackWidth.
	Concurrency int
	// DeadlineMargin is the time before the invocation's deadline at which nothing more is
	// started: what would start later is reported failed unprocessed, and is delivered again.
	// It should exceed the longest time one message can take (a DynamoDB transaction with its
	// retries, a dead-letter send), so that the batch answers before Lambda times it out as a
	// whole. Default DefaultDeadlineMargin.
	DeadlineMargin time.Duration
	// DeadLetter receives what can never succeed (malformed, conflicting, or failed
	// MaxAttempts times), which is then done with (an SQS message acknowledged, a stream's
	// record passed). Nil: it is reported failed, and the source's own retry settings decide
	// (an SQS queue's redrive policy after maxReceiveCount receives; an event source mapping's
	// MaximumRetryAttempts and MaximumRecordAgeInSeconds).
	DeadLetter DeadLetterer
	// MaxAttempts is how many times processing of one message may fail before it is
	// dead-lettered (with the reason "failed N times: <last error>"). Default
	// port.DefaultMaxAttempts.
	MaxAttempts int
	// NoPacking turns off multi-message transactions. By default a port on an engine that
	// packs (an idempotency.Consumer's) commits the messages its workers are applying at the
	// same moment (the next message of several groups) in shared TransactWriteItems calls when
	// their items are disjoint and fit DynamoDB's limits. Outcomes, records, logs and metrics
	// stay per message either way.
	NoPacking bool
}
