// Package kinesisbatch is the Kinesis Data Streams port of the engine: a Processor turns one
// Lambda Kinesis event into per-record calls of an port.Engine on the batch core every
// port shares (package batch). Records of one partition key are applied in order and stopped at
// the first failure, keys concurrently; the response reports the first record that was not done
// with (BatchItemFailures with its sequence number), so that Lambda delivers the shard again
// from there (records of other keys applied after it come back as duplicates). A record that
// can never succeed goes to an SQS queue with its reason (deadletter.Queue), its key held first
// under the consumer's HoldGroup policy.
package kinesisbatch
