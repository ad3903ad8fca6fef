package kinesisbatch

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/port"
)

// Decoder turns a Kinesis record into the event applied. Its ID is the idempotency key: the
// record's eventID ("shardId-…:<sequence number>", the default, RecordEvent) names this record, the
// same on every delivery; a key from the payload (CloudEvents) names a logical event that a
// producer may put more than once (a PutRecord retried after a timeout). An error marked
// permanent (cloudevent.MalformedError is) dead-letters the record; any other fails it. Decode
// is called concurrently, for records of different partition keys.
type Decoder interface {
	Decode(ctx context.Context, rec events.KinesisEventRecord) (cloudevent.Event, error)
}

// DecoderFunc adapts a function to Decoder.
type DecoderFunc func(ctx context.Context, rec events.KinesisEventRecord) (cloudevent.Event, error)

// Decode calls f.
func (f DecoderFunc) Decode(ctx context.Context, rec events.KinesisEventRecord) (cloudevent.Event, error) {
	return f(ctx, rec)
}

// Config tunes a Processor. The zero value works: Options as batch.Options documents them
// (Concurrency counts keys), Decoder RecordEvent (the record as the event), Replay for
// HandleReplay and Invoke.
type Config struct {
	batch.Options // the settings every port shares
	// Decoder is what a record's event is; nil: RecordEvent.
	Decoder Decoder
	// Replay tunes the replay path (HandleReplay, Invoke): the consumer's replay queue, where
	// an operator redrives the stream's dead letters to be applied in their key's order.
	Replay batch.ReplayConfig
}

// Processor applies Kinesis records with an engine. It is safe for concurrent use; build it
// once at init and pass Handle to lambda.Start, or the Processor itself (Invoke) when the
// function consumes its replay queue too (docs/ports.md).
type Processor struct {
	s *batch.StreamProcessor[events.KinesisEventRecord]
}

// New returns a Processor applying each record's event with e (a consumer's Engine), through
// the engine's whole contract; it logs and counts with e's Logger and Metrics.
func New(e port.Engine, cfg Config) (*Processor, error) {
	s, err := batch.NewStreamProcessor(e, cfg.Options, cfg.Replay, cfg.Decoder, stream)
	if err != nil {
		return nil, err
	}
	return &Processor{s: s}, nil
}

// stream is what this port says of its records to the batch core.
var stream = batch.Stream[events.KinesisEventRecord]{Name: "kinesisbatch", Item: item, Delivery: delivery, Decode: RecordEvent,
	Message: Message, KeyedOn: "the record's eventID (its shard and sequence number)"}

// Handle is the Lambda handler (the mapping's FunctionResponseTypes must include
// ReportBatchItemFailures). It never returns an error and never panics: when a record was not
// done with, BatchItemFailures holds the first such record's sequence number.
func (p *Processor) Handle(ctx context.Context, ev events.KinesisEvent) (events.KinesisEventResponse, error) {
	resp := events.KinesisEventResponse{BatchItemFailures: []events.KinesisBatchItemFailure{}}
	if seq, ok := p.s.Failed(ctx, ev.Records, sequence); ok {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.KinesisBatchItemFailure{ItemIdentifier: seq})
	}
	return resp, nil
}

// HandleReplay is the Lambda handler of the consumer's replay queue (an SQS FIFO queue whose
// event source mapping's FunctionResponseTypes include ReportBatchItemFailures): each message
// a dead letter of this stream that an operator redrove, its record decoded by the Decoder and
// applied as if the stream delivered it again (batch.Replay). It never returns an error and
// never panics: every message not done with is in BatchItemFailures.
func (p *Processor) HandleReplay(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return p.s.HandleReplay(ctx, ev)
}

// Invoke is the Lambda handler of a function whose event sources are the stream and its
// replay queue (lambda.Start(p)): it runs a Kinesis event through Handle, an SQS event
// through HandleReplay, telling them apart by the records' eventSource.
func (p *Processor) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return batch.Invoke(ctx, payload, p.Handle, p.HandleReplay)
}

func delivery(rec events.KinesisEventRecord) port.Delivery {
	return port.Delivery{MessageID: rec.EventID, SequenceNumber: rec.Kinesis.SequenceNumber, Group: rec.Kinesis.PartitionKey}
}

func sequence(rec events.KinesisEventRecord) string { return rec.Kinesis.SequenceNumber }

func item(rec events.KinesisEventRecord) batch.Item {
	return batch.Item{ID: rec.EventID, Group: rec.Kinesis.PartitionKey}
}

// RecordType is the event type RecordEvent gives every record: what a Router routes on.
const RecordType = "aws.kinesis.record"

// RecordEvent is the default Decoder: the event is the record itself, its ID the record's eventID,
// its type RecordType, its subject the partition key, its time the arrival's, and its
// data the record's data when that is JSON, else the data as a JSON string (base64).
func RecordEvent(_ context.Context, rec events.KinesisEventRecord) (cloudevent.Event, error) {
	data := json.RawMessage(rec.Kinesis.Data)
	if !json.Valid(data) {
		data, _ = json.Marshal(rec.Kinesis.Data)
	}
	return cloudevent.Event{SpecVersion: "1.0", ID: rec.EventID, Source: rec.EventSourceArn, Type: RecordType,
		Subject: rec.Kinesis.PartitionKey, Time: rec.Kinesis.ApproximateArrivalTimestamp.UTC(),
		DataContentType: "application/json", Data: data}, nil
}

// CloudEventData decodes a record whose data is a CloudEventData 1.0 JSON object (structured mode):
// the event's own id is its key, so a producer's retried PutRecord is applied once.
func CloudEventData(_ context.Context, rec events.KinesisEventRecord) (cloudevent.Event, error) {
	return cloudevent.Decode(rec.Kinesis.Data)
}

// Message is the record as an SQS message, for a DeadLetterer: its body the record's JSON, its
// id the eventID, its group the partition key as it is (the hold's group; a deadletter.Queue
// groups the letter by its deadletter.GroupID and keeps the key), its source the stream's ARN.
func Message(rec events.KinesisEventRecord) events.SQSMessage {
	body, _ := json.Marshal(rec)
	return events.SQSMessage{MessageId: rec.EventID, Body: string(body), EventSourceARN: rec.EventSourceArn,
		Attributes: map[string]string{"MessageGroupId": rec.Kinesis.PartitionKey, "MessageDeduplicationId": rec.EventID}}
}
