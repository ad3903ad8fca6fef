package dynamodbbatch

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/port"
)

// Decoder turns a stream record into the event applied. Its ID is the idempotency key: the
// record's eventID (the default, ChangeEvent) names the change itself, the same on every delivery;
// a key from the image (an event id the writer stored) names a logical event that may be
// written more than once. An error marked permanent (cloudevent.MalformedError is) dead-letters
// the record; any other fails it. Decode is called concurrently, for records of different items.
type Decoder interface {
	Decode(ctx context.Context, rec events.DynamoDBEventRecord) (cloudevent.Event, error)
}

// DecoderFunc adapts a function to Decoder.
type DecoderFunc func(ctx context.Context, rec events.DynamoDBEventRecord) (cloudevent.Event, error)

// Decode calls f.
func (f DecoderFunc) Decode(ctx context.Context, rec events.DynamoDBEventRecord) (cloudevent.Event, error) {
	return f(ctx, rec)
}

// Config tunes a Processor. The zero value works: Options as batch.Options documents them
// (Concurrency counts keys), Decoder ChangeEvent (the record as the event), Replay for
// HandleReplay and Invoke.
type Config struct {
	batch.Options // the settings every port shares
	// Decoder is what a record's event is; nil: ChangeEvent.
	Decoder Decoder
	// Replay tunes the replay path (HandleReplay, Invoke): the consumer's replay queue, where
	// an operator redrives the stream's dead letters to be applied in their key's order.
	Replay batch.ReplayConfig
}

// Processor applies DynamoDB stream records with an engine. It is safe for concurrent use;
// build it once at init and pass Handle to lambda.Start, or the Processor itself (Invoke) when
// the function consumes its replay queue too (docs/ports.md).
type Processor struct {
	s *batch.StreamProcessor[events.DynamoDBEventRecord]
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
var stream = batch.Stream[events.DynamoDBEventRecord]{Name: "dynamodbbatch", Item: item, Delivery: delivery, Decode: ChangeEvent,
	Message: Message, KeyedOn: "the stream record's eventID"}

// Handle is the Lambda handler (the mapping's FunctionResponseTypes must include
// ReportBatchItemFailures). It never returns an error and never panics: when a record was not
// done with, BatchItemFailures holds the first such record's sequence number.
func (p *Processor) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	if seq, ok := p.s.Failed(ctx, ev.Records, sequence); ok {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seq})
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
// replay queue (lambda.Start(p)): it runs a DynamoDB event through Handle, an SQS event
// through HandleReplay, telling them apart by the records' eventSource.
func (p *Processor) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	return batch.Invoke(ctx, payload, p.Handle, p.HandleReplay)
}

func delivery(rec events.DynamoDBEventRecord) port.Delivery {
	return port.Delivery{MessageID: rec.EventID, SequenceNumber: rec.Change.SequenceNumber, Group: Key(rec)}
}

func sequence(rec events.DynamoDBEventRecord) string { return rec.Change.SequenceNumber }

func item(rec events.DynamoDBEventRecord) batch.Item {
	return batch.Item{ID: rec.EventID, Group: Key(rec)}
}

// Key is the record's item key, its ordered group: its key attributes, sorted by name, as
// name=value joined by "|" (the hold's group name under HoldGroup).
func Key(rec events.DynamoDBEventRecord) string {
	names := make([]string, 0, len(rec.Change.Keys))
	for n := range rec.Change.Keys {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + value(rec.Change.Keys[n])
	}
	return strings.Join(parts, "|")
}

func value(v events.DynamoDBAttributeValue) string {
	switch v.DataType() {
	case events.DataTypeString:
		return v.String()
	case events.DataTypeNumber:
		return v.Number()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// The event types ChangeEvent gives a record, by its eventName: what a Router routes on.
const (
	Insert = "aws.dynamodb.insert" // an item written new (INSERT)
	Modify = "aws.dynamodb.modify" // an item changed (MODIFY)
	Remove = "aws.dynamodb.remove" // an item deleted, or expired by its TTL (REMOVE)
)

// ChangeEvent is the default Decoder: the event is the change itself, its ID the record's eventID,
// its type Insert, Modify or Remove, its subject the item's Key, its time the
// change's, and its data the stream record's "dynamodb" object (Keys, NewImage, OldImage in
// DynamoDB JSON).
func ChangeEvent(_ context.Context, rec events.DynamoDBEventRecord) (cloudevent.Event, error) {
	data, err := json.Marshal(rec.Change)
	if err != nil {
		return cloudevent.Event{}, idempotency.Permanent(fmt.Errorf("encode record %s: %w", rec.EventID, err))
	}
	return cloudevent.Event{SpecVersion: "1.0", ID: rec.EventID, Source: rec.EventSourceArn,
		Type: changeType(rec.EventName), Subject: Key(rec),
		Time: rec.Change.ApproximateCreationDateTime.UTC(), DataContentType: "application/json", Data: data}, nil
}

// Message is the record as an SQS message, for a DeadLetterer: its body the record's JSON, its
// id the eventID, its group the item's Key as it is (the hold's group; a deadletter.Queue
// groups the letter by its deadletter.GroupID and keeps the key), its source the stream's ARN.
func Message(rec events.DynamoDBEventRecord) events.SQSMessage {
	body, _ := json.Marshal(rec)
	return events.SQSMessage{MessageId: rec.EventID, Body: string(body), EventSourceARN: rec.EventSourceArn,
		Attributes: map[string]string{"MessageGroupId": Key(rec), "MessageDeduplicationId": rec.EventID}}
}

// changeType is the event type of a change named eventName: Insert, Modify, Remove, or for a
// name DynamoDB may add, "aws.dynamodb." and the name in lower case.
func changeType(eventName string) string {
	switch events.DynamoDBOperationType(eventName) {
	case events.DynamoDBOperationTypeInsert:
		return Insert
	case events.DynamoDBOperationTypeModify:
		return Modify
	case events.DynamoDBOperationTypeRemove:
		return Remove
	}
	return "aws.dynamodb." + strings.ToLower(eventName)
}
