// Package batch is the SQS port: a Processor turns one Lambda SQS event into per-message
// calls of a MessageHandler and answers with a partial batch response, so only the messages
// that failed come back. On FIFO queues it keeps each message group in order and stops a
// group at its first failure; permanent failures go to a dead-letter queue, and a deadline
// guard stops starting work before the invocation runs out of time.
package sqsbatch
