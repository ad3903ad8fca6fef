// Package batch is the batch core every port of the engine shares (package sqsbatch for SQS,
// dynamodbbatch for DynamoDB Streams, kinesisbatch for Kinesis): it runs the records of one
// Lambda event in groups (an SQS FIFO message group, a stream's partition key), each group in
// order and stopped at its first failure, groups concurrently, behind a deadline guard, with
// panics recovered and what can never succeed dead-lettered; and it applies each record's
// event in one port.Batch per run of an port.Engine, whose answer (acknowledge,
// deliver again, dead-letter) it carries out: the counting of failed attempts, the holds and
// the packing of commits across groups are the engine's. A port only maps its records to
// Items and the outcomes to its response.
package batch
