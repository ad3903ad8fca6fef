// Package dynamodbbatch is the DynamoDB Streams port of the engine: a Processor turns one Lambda
// DynamoDB stream event into per-record calls of an port.Engine on the batch core every
// port shares (package batch). Records of one item (its key) are applied in order and stopped
// at the first failure, items concurrently; the response reports the first record that was not
// done with (BatchItemFailures with its sequence number), so that Lambda, whose checkpoint is
// the lowest sequence number reported, delivers the batch again from there (the records of
// other items applied after it come back as duplicates, answered without effect). A record that
// can never succeed goes to an SQS queue with its reason (deadletter.Queue), its item held
// first under the consumer's HoldGroup policy.
package dynamodbbatch
