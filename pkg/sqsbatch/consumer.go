package sqsbatch

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/envelope"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
)

// Applier applies one decoded event exactly once: *idempotency.Consumer and
// *idempotency.LeasedConsumer implement it. Implementations must be safe for concurrent use.
type Applier interface {
	Name() string
	Apply(ctx context.Context, ev cloudevent.Event, d idempotency.Delivery) (idempotency.Result, error)
}

// NewConsumer is the common case in one call: a Processor whose messages are CloudEvents
// applied exactly once by an idempotency.Consumer committing what handler decides to db. The
// consumer and the processor share one logger and one metrics recorder: where only one of the
// two configs sets it, the other takes it; the processor flushes the recorder after every batch.
// Pass Config.DeadLetter (a deadletter.Queue) so that what can never succeed is moved aside
// with its reason; without one it is left to the queue's redrive policy.
func NewConsumer(db idempotency.DB, handler idempotency.Handler, consumer idempotency.Config, cfg Config) (*Processor, error) {
	consumer.Logger, cfg.Logger = either(consumer.Logger, cfg.Logger)
	consumer.Metrics, cfg.Metrics = either(consumer.Metrics, cfg.Metrics)
	c, err := idempotency.New(db, handler, consumer)
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", consumer.Name, err)
	}
	return NewFor(c, cfg)
}

// NewFor returns a Processor that decodes each message with cfg.Decoder (by default as a
// CloudEvent) and applies the event with a. A message the decoder refuses as malformed is
// logged, counted and dead-lettered; any other decoder error fails the message, which is
// received again.
// The processor flushes cfg.Metrics after every batch: give a the same recorder, so that what
// it counts is flushed too.
func NewFor(a Applier, cfg Config) (*Processor, error) {
	if a == nil {
		return nil, fmt.Errorf("sqsbatch: Applier is nil")
	}
	d := cfg.withDefaults()
	if d.Decoder == nil {
		d.Decoder = envelope.CloudEvents{}
	}
	return New(decoding{a: a, dec: d.Decoder, log: d.Logger, metrics: d.Metrics, maxAttempts: d.MaxAttempts, maxReceiveCount: d.MaxReceiveCount, payloads: d.Payloads}, cfg)
}

// Decoder turns an SQS message into the event an Applier applies. Package envelope has one
// for each kind of producer (CloudEvents, EventBridge, SNS, S3, plain JSON, a function). The
// event's ID is the idempotency key: it must name the logical event, the same on every
// delivery and every publisher retry, so take it from the payload, not from a transport id
// that each publish call makes new (EventBridge's id, SNS's MessageId). An error marked
// permanent (cloudevent.MalformedError is) dead-letters the message; any other error fails it.
// Decode is called concurrently, for messages of different groups.
type Decoder interface {
	Decode(ctx context.Context, msg events.SQSMessage) (cloudevent.Event, error)
}

// either returns a and b, each set to the other where it is the zero value.
func either[T comparable](a, b T) (T, T) {
	var zero T
	switch {
	case a == zero:
		return b, b
	case b == zero:
		return a, a
	}
	return a, b
}

// Delivery returns what an SQS message says of its delivery, for the idempotency record.
func Delivery(msg events.SQSMessage) idempotency.Delivery {
	n, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	return idempotency.Delivery{MessageID: msg.MessageId, SequenceNumber: msg.Attributes["SequenceNumber"],
		ReceiveCount: n, Body: msg.Body, Group: msg.Attributes["MessageGroupId"]}
}

// decoding is the MessageHandler of NewFor.
type decoding struct {
	a               Applier
	dec             Decoder
	log             *slog.Logger
	metrics         metrics.Recorder
	maxAttempts     int
	maxReceiveCount int // 0: no backstop hold
	payloads        PayloadReader
}

func (h decoding) HandleMessage(ctx context.Context, msg events.SQSMessage) error {
	body, err := h.payload(ctx, msg)
	if err != nil {
		return h.hold(ctx, msg, "", err)
	}
	resolved := msg // the record keeps the message as received (a claim check's pointer)
	resolved.Body = body
	ev, err := h.dec.Decode(ctx, resolved)
	if err != nil && !idempotency.IsPermanent(err) {
		return fmt.Errorf("decode message %s: %w", msg.MessageId, err)
	}
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "message "+string(idempotency.Malformed),
			slog.String("consumer", h.a.Name()), slog.String("messageId", msg.MessageId),
			slog.String("outcome", string(idempotency.Malformed)), slog.String("error", err.Error()))
		h.metrics.Count(metrics.Malformed, 1)
		return h.hold(ctx, msg, "", err)
	}
	if err := h.exhausted(ctx, msg, ev.ID); err != nil {
		return h.hold(ctx, msg, ev.ID, err)
	}
	d := Delivery(msg)
	d.HoldWritten = h.backstop(ctx, msg, ev.ID)
	if _, err = h.recovered(ctx, ev, d); err == nil {
		return nil
	}
	return h.hold(ctx, msg, ev.ID, h.count(ctx, msg, ev.ID, err))
}
