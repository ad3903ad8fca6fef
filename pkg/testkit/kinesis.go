package testkit

import (
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Kinesis builds the records a Lambda function receives from one Kinesis data stream, as its
// event source mapping delivers them: the partition key, the data, an increasing sequence
// number, the arrival time, the shard's event id and the stream's ARN. It is safe for
// concurrent use.
type Kinesis struct {
	arn   string
	shard string
	mu    sync.Mutex
	n     int64
}

// KinesisStream returns a stream named name, whose records come from its first shard.
func KinesisStream(name string) *Kinesis {
	return &Kinesis{arn: "arn:aws:kinesis:us-east-1:000000000000:stream/" + name, shard: "shardId-000000000000"}
}

// ARN is the stream's ARN, the records' EventSourceArn.
func (k *Kinesis) ARN() string { return k.arn }

// Record returns a new record of partition key carrying data, its sequence number greater
// than the one before. The same data put again is another record: a producer's retry.
func (k *Kinesis) Record(partitionKey string, data []byte) events.KinesisEventRecord {
	k.mu.Lock()
	k.n++
	n := k.n
	k.mu.Unlock()
	seq := fmt.Sprintf("4959%052d", n)
	return events.KinesisEventRecord{
		AwsRegion: "us-east-1", EventID: k.shard + ":" + seq, EventName: "aws:kinesis:record",
		EventSource: "aws:kinesis", EventSourceArn: k.arn, EventVersion: "1.0",
		InvokeIdentityArn: "arn:aws:iam::000000000000:role/testkit",
		Kinesis: events.KinesisRecord{
			ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: time.Now().Truncate(time.Millisecond)},
			Data:                        data, KinesisSchemaVersion: "1.0", PartitionKey: partitionKey, SequenceNumber: seq,
		},
	}
}

// KinesisBatch is the event Lambda passes the function: recs in the order given, which is the
// shard's order.
func KinesisBatch(recs ...events.KinesisEventRecord) events.KinesisEvent {
	return events.KinesisEvent{Records: append([]events.KinesisEventRecord(nil), recs...)}
}

// Resent is rec's data put again under its partition key: a new record (a new sequence number
// and eventID), as a producer's PutRecord retried after a timeout is. Only a decoder that keys
// events on the payload (kinesisbatch.CloudEventData) makes it a duplicate.
func (k *Kinesis) Resent(rec events.KinesisEventRecord) events.KinesisEventRecord {
	return k.Record(rec.Kinesis.PartitionKey, rec.Kinesis.Data)
}
