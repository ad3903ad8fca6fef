package sqsbatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/envelope"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/port"
)

// NewConsumer is the common case in one call: a Processor whose messages are CloudEvents
// applied exactly once by an idempotency.Consumer committing what handler decides to db. The
// logger and metrics recorder are the consumer's (idempotency.Config): the processor logs and
// counts there too and flushes the recorder after every batch.
// Pass Config.DeadLetter (a deadletter.Queue) so that what can never succeed is moved aside
// with its reason; without one it is left to the queue's redrive policy.
func NewConsumer(db idempotency.DB, handler idempotency.Handler, consumer idempotency.Config, cfg Config) (*Processor, error) {
	c, err := idempotency.New(db, handler, consumer)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("consumer %s: %w", consumer.Name, err), cfg.Validate())
	}
	return NewFor(c.Engine(), cfg)
}

// NewFor returns a Processor that decodes each message with cfg.Decoder (by default as a
// CloudEvent) and applies the event with e, through the engine's whole contract: failed
// attempts counted per message, groups held under the consumer's policy (also before a
// message's last receives, with MaxReceiveCount), commits packed across groups when e packs.
// A message the decoder refuses as malformed is logged, counted and dead-lettered; any other
// decoder error fails the message, which is received again. The processor logs and counts
// with e's Logger and Metrics, and flushes them after every batch.
func NewFor(e port.Engine, cfg Config) (*Processor, error) {
	if e == nil {
		return nil, errors.New("sqsbatch: the port.Engine is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := cfg.withDefaults()
	if d.Decoder == nil {
		d.Decoder = envelope.CloudEvents{}
	}
	dec := decoding{e: e, dec: d.Decoder, log: e.Logger(), metrics: e.Metrics(), maxReceiveCount: d.MaxReceiveCount, payloads: d.Payloads,
		answerMargin: d.DeadlineMargin / 4}
	p, err := newProcessor(dec.handle, e, d.Rules(), settings{concurrency: d.Concurrency, margin: d.DeadlineMargin, deadLetter: d.DeadLetter,
		logger: e.Logger(), metrics: e.Metrics()})
	if err != nil {
		return nil, err
	}
	p.held = dec.backstop
	return p, nil
}

// Decoder turns an SQS message into the event the engine applies. Package envelope has one
// for each kind of producer (CloudEvents, EventBridge, SNS, S3, plain JSON, a function). The
// event's ID is the idempotency key: it must name the logical event, the same on every
// delivery and every publisher retry, so take it from the payload, not from a transport id
// that each publish call makes new (EventBridge's id, SNS's MessageId). An error marked
// permanent (cloudevent.MalformedError is) dead-letters the message; any other error fails it.
// Decode is called concurrently, for messages of different groups.
type Decoder interface {
	Decode(ctx context.Context, msg events.SQSMessage) (cloudevent.Event, error)
}

// DeliveryOf returns what an SQS message says of its delivery, for the idempotency record.
func DeliveryOf(msg events.SQSMessage) port.Delivery {
	n, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	return port.Delivery{MessageID: msg.MessageId, SequenceNumber: msg.Attributes["SequenceNumber"],
		ReceiveCount: n, Body: msg.Body, Group: msg.Attributes["MessageGroupId"], Origin: origin(msg)}
}

// origin is the id msg was first sent as, when a redrive sent it again (its
// deadletter.AttrOriginalMessageID), else "".
func origin(msg events.SQSMessage) string {
	if v := msg.MessageAttributes[deadletter.AttrOriginalMessageID].StringValue; v != nil && *v != msg.MessageId {
		return *v
	}
	return ""
}

// decoding is the message handling of NewFor.
type decoding struct {
	e               port.Engine
	dec             Decoder
	log             *slog.Logger
	metrics         metrics.Recorder
	maxReceiveCount int // 0: no backstop hold
	payloads        claimcheck.PayloadReader
	answerMargin    time.Duration // a payload's read ends this long before the deadline (batch.EndBefore)
}

func (h decoding) handle(ctx context.Context, b port.Batch, r record) error {
	msg := r.msg
	d := DeliveryOf(msg)
	d.HoldWritten = r.held // by the backstop, before the batch ran
	body, err := h.payload(ctx, msg)
	if err != nil {
		return b.Fail(ctx, d, cloudevent.Event{}, err)
	}
	resolved := msg // the record keeps the message as received (a claim check's pointer)
	resolved.Body = body
	ev, err := h.dec.Decode(ctx, resolved)
	if err != nil && !idempotency.IsPermanent(err) {
		return fmt.Errorf("decode message %s: %w", msg.MessageId, err)
	}
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "message "+string(idempotency.Malformed),
			slog.String("consumer", h.e.Name()), slog.String("messageId", msg.MessageId),
			slog.String("outcome", string(idempotency.Malformed)), slog.String("error", err.Error()))
		h.metrics.Count(metrics.Malformed, 1)
		return b.Fail(ctx, d, cloudevent.Event{}, err)
	}
	return deadletter.WithEvent(engine.NameKey(b.Apply(ctx, ev, d), batch.KeyedOn(h.dec)), ev)
}
