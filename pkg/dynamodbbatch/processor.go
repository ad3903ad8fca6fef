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
// record's eventID (the default, Record) names the change itself, the same on every delivery;
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

// DeadLetterer is batch.DeadLetterer, the one dead-letter sink of every port; it gets a record
// as Message makes it.
type DeadLetterer = batch.DeadLetterer

// Options is batch.Options, the settings every port's Config embeds.
type Options = batch.Options

// Config tunes a Processor: batch.StreamPortConfig with this port's Decoder. The zero value
// works: Concurrency (keys at once) batch.DefaultConcurrency, DeadlineMargin 2s, MaxAttempts 5
// (failed attempts before a record is dead-lettered), DeadLetter nil (what can never succeed is
// reported failed, for the mapping's retry settings), packing on (NoPacking false), Decoder
// ChangeEvent (the record as the event), Replay for HandleReplay and Invoke.
type Config = batch.StreamPortConfig[Decoder]

// ReplayConfig tunes the replay path of a Processor (batch.ReplayConfig): the claim-check
// reader of replayed records past SQS's 1 MiB, and the replay queue's maxReceiveCount.
type ReplayConfig = batch.ReplayConfig

// Processor applies DynamoDB stream records with an engine. It is safe for concurrent use;
// build it once at init and pass Handle to lambda.Start.
type Processor struct {
	port *batch.StreamPort[events.DynamoDBEventRecord]
}

// New returns a Processor applying each record's event with e, through the engine's whole
// contract; it logs and counts with e's Logger and Metrics.
func New(e port.Engine, cfg Config) (*Processor, error) {
	dec, keyedOn := cfg.Decoder, batch.KeyedOn(cfg.Decoder)
	if dec == nil {
		dec, keyedOn = DecoderFunc(ChangeEvent), "the stream record's eventID"
	}
	port, err := batch.NewStreamPort(e, cfg, batch.Stream[events.DynamoDBEventRecord]{Name: "dynamodbbatch", Item: item, Delivery: delivery, Decode: dec.Decode, Message: Message, KeyedOn: keyedOn})
	if err != nil {
		return nil, err
	}
	return &Processor{port: port}, nil
}

// Handle is the Lambda handler (the mapping's FunctionResponseTypes must include
// ReportBatchItemFailures). It never returns an error and never panics: when a record was not
// done with, BatchItemFailures holds the first such record's sequence number.
func (p *Processor) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	if i := p.port.FirstFailed(ctx, ev.Records); i >= 0 {
		resp.BatchItemFailures = append(resp.BatchItemFailures,
			events.DynamoDBBatchItemFailure{ItemIdentifier: ev.Records[i].Change.SequenceNumber})
	}
	return resp, nil
}

// HandleReplay is the Lambda handler of the consumer's replay queue (an SQS FIFO queue whose
// event source mapping's FunctionResponseTypes include ReportBatchItemFailures): each message
// a dead letter of this stream that an operator redrove, its record decoded by the Decoder and
// applied as if the stream delivered it again (batch.Replay). It never returns an error and
// never panics: every message not done with is in BatchItemFailures.
func (p *Processor) HandleReplay(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return p.port.HandleReplay(ctx, ev)
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

// ChangeEvent is the default Decoder: the event is the change itself, its ID the record's eventID,
// its type "aws.dynamodb.<insert|modify|remove>", its subject the item's Key, its time the
// change's, and its data the stream record's "dynamodb" object (Keys, NewImage, OldImage in
// DynamoDB JSON).
func ChangeEvent(_ context.Context, rec events.DynamoDBEventRecord) (cloudevent.Event, error) {
	data, err := json.Marshal(rec.Change)
	if err != nil {
		return cloudevent.Event{}, idempotency.Permanent(fmt.Errorf("encode record %s: %w", rec.EventID, err))
	}
	return cloudevent.Event{SpecVersion: "1.0", ID: rec.EventID, Source: rec.EventSourceArn,
		Type: "aws.dynamodb." + strings.ToLower(rec.EventName), Subject: Key(rec),
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
