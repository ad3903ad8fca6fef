package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/port"
)

// Stream is what a stream port (DynamoDB Streams, Kinesis) says of its records; everything
// else, from decoding errors to dead letters, is the same for every stream and lives here.
type Stream[R any] struct {
	Name     string                                                     // the port's name, in errors
	Item     func(R) Item                                               // the record's id and its ordered group (the key)
	Delivery func(R) port.Delivery                                      // what the record says of its delivery
	Decode   func(ctx context.Context, rec R) (cloudevent.Event, error) // the event to apply
	Message  func(R) events.SQSMessage                                  // the record as a dead letter
	KeyedOn  string                                                     // what Decode keys events on, for a conflict's reason; "" unknown
}

// KeyedOn is what decoder says it keys events on (a KeyedOn method: package envelope's
// decoders have one), "" when it says nothing.
func KeyedOn(decoder any) string {
	if k, ok := decoder.(interface{ KeyedOn() string }); ok {
		return k.KeyedOn()
	}
	return ""
}

// Decoder turns a stream record R into the event applied: each stream port's Decoder
// (dynamodbbatch.Decoder, kinesisbatch.Decoder) is one.
type Decoder[R any] interface {
	Decode(ctx context.Context, rec R) (cloudevent.Event, error)
}

// StreamProcessor is the processor of every stream port (dynamodbbatch, kinesisbatch) over its
// records R: the stream's batches, and its replay queue's, over one engine. A stream port is a
// StreamProcessor and the Lambda event types around it. It is safe for concurrent use.
type StreamProcessor[R any] struct {
	port   *Port[R]
	replay *Replay[R]
}

// NewStreamProcessor returns the processor of stream s, applying each record's event with e:
// opts are the port's settings, rc its replay path's, and dec its Decoder; nil decodes with
// s.Decode, the port's default, which keys events on s.KeyedOn.
func NewStreamProcessor[R any](e port.Engine, opts Options, rc ReplayConfig, dec Decoder[R], s Stream[R]) (*StreamProcessor[R], error) {
	if dec != nil {
		s.Decode, s.KeyedOn = dec.Decode, KeyedOn(dec)
	}
	p, err := newStream(e, opts, s)
	if err != nil {
		return nil, err
	}
	replay, err := newReplay(e, opts, rc, s)
	if err != nil {
		return nil, err
	}
	return &StreamProcessor[R]{port: p, replay: replay}, nil
}

// Failed runs a stream batch and returns the sequence number of its first record not done
// with, the one a partial batch response reports; ok is false when all are done with.
func (p *StreamProcessor[R]) Failed(ctx context.Context, recs []R, sequence func(R) string) (seq string, ok bool) {
	if i := FirstFailed(p.port.Run(ctx, recs)); i >= 0 {
		return sequence(recs[i]), true
	}
	return "", false
}

// HandleReplay is the replay queue's handler (Replay.Handle).
func (p *StreamProcessor[R]) HandleReplay(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return p.replay.Handle(ctx, ev)
}

// newStream returns the Port of a stream applying each record's event with e: a permanent
// decoding error is malformed (logged, counted, dead-lettered holding its key under
// HoldGroup), any other fails the record.
func newStream[R any](e port.Engine, cfg Options, s Stream[R]) (*Port[R], error) {
	if e == nil {
		return nil, fmt.Errorf("%s: the port.Engine is nil", s.Name)
	}
	if s.Item == nil || s.Delivery == nil || s.Decode == nil || s.Message == nil {
		return nil, errors.New("batch: a Stream needs Item, Delivery, Decode and Message")
	}
	if err := cfg.Rules().Validate(); err != nil {
		return nil, fmt.Errorf("%s config: %w", s.Name, err)
	}
	r, err := New(Config{Concurrency: cfg.Concurrency, DeadlineMargin: cfg.DeadlineMargin,
		Logger: e.Logger(), Metrics: e.Metrics()})
	if err != nil {
		return nil, fmt.Errorf("%s config: %w", s.Name, err)
	}
	pc := PortConfig[R]{Runner: r, Engine: e, Rules: cfg.Rules(), Item: s.Item, Handle: func(ctx context.Context, b port.Batch, rec R) error {
		return s.apply(ctx, e, b, rec, s.Delivery(rec))
	}}
	if dl := cfg.DeadLetter; dl != nil {
		pc.DeadLetter = func(ctx context.Context, rec R, reason error) error {
			return dl.DeadLetter(ctx, s.Message(rec), reason)
		}
	}
	return NewPort(pc)
}

// apply decodes rec and applies its event, delivered as d: from the stream, or replayed from
// the consumer's replay queue.
func (s Stream[R]) apply(ctx context.Context, e port.Engine, b port.Batch, rec R, d port.Delivery) error {
	ev, err := s.Decode(ctx, rec)
	if err != nil && !idempotency.IsPermanent(err) {
		return fmt.Errorf("decode record %s: %w", d.MessageID, err)
	}
	if err != nil {
		malformed(ctx, e, d.MessageID, err)
		return b.Fail(ctx, d, cloudevent.Event{}, err)
	}
	// The letter carries the decoded event (its id and payload hash), as the SQS port's do:
	// a stream letter's body (the record) shows neither.
	return deadletter.WithEvent(engine.NameKey(b.Apply(ctx, ev, d), s.KeyedOn), ev)
}

// malformed logs and counts a record (or a replayed letter) that can never be decoded.
func malformed(ctx context.Context, e port.Engine, messageID string, err error) {
	e.Logger().LogAttrs(ctx, slog.LevelError, "message "+string(idempotency.Malformed),
		slog.String("consumer", e.Name()), slog.String("messageId", messageID),
		slog.String("outcome", string(idempotency.Malformed)), slog.String("error", err.Error()))
	e.Metrics().Count(metrics.Malformed, 1)
}
