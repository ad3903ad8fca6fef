package idempotency

import (
	"context"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/port"
)

// Consumer applies events to DynamoDB exactly once: it is the idempotent consumer. Each event's
// effect, decided by its Handler, is committed with the record "consumer C processed event E"
// in one TransactWriteItems. It is safe for concurrent use by many goroutines.
type Consumer struct {
	e *engine.Consumer
}

// New returns a Consumer committing the effects handler decides.
func New(db DB, handler Handler, cfg Config) (*Consumer, error) {
	var decide engine.Handler
	if handler != nil {
		decide = compiled{handler}
	}
	e, err := engine.New(db, decide, cfg.engine())
	if err != nil {
		return nil, err
	}
	return &Consumer{e: e}, nil
}

// Apply applies one event, delivered as d, exactly once, and logs and counts its outcome once.
// It is the entry point for a transport without a port: a stream, Kinesis or EventBridge
// handler of your own calls it with the event it decoded (sqsbatch, dynamodbbatch and
// kinesisbatch take the Engine instead).
//
// The error is nil when the event is done with (applied, duplicate, rejected); marked
// permanent (IsPermanent) when it can never succeed (malformed, conflict, invalid effect), to
// be dead-lettered; and anything else when a delivery again may succeed.
func (c *Consumer) Apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) (Result, error) {
	res, err := c.e.Apply(ctx, ev, d)
	return resultOf(res), err
}

// Engine is the consumer as a port drives it (package port): sqsbatch.NewFor,
// dynamodbbatch.New and kinesisbatch.New take it. Its batches count failed attempts, hold
// groups under HoldGroup and pack the commits of a batch's groups into shared transactions.
func (c *Consumer) Engine() port.Engine { return c.e }

// compiled is a Handler whose effects the engine commits.
type compiled struct{ h Handler }

func (c compiled) Decide(ctx context.Context, ev cloudevent.Event) (engine.Effect, error) {
	effect, err := c.h.Decide(ctx, ev)
	if err != nil {
		return nil, err
	}
	return effect.compile(), nil
}
