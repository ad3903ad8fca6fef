package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/port"
)

// Handler decides the effect of one event (idempotency.Handler, its effect compiled). It is
// called concurrently for different events.
type Handler interface {
	Decide(ctx context.Context, ev cloudevent.Event) (Effect, error)
}

// Consumer applies events to DynamoDB exactly once: it is the idempotent consumer, the
// transactional mode (idempotency.Consumer). Each event's effect, decided by its Handler, is
// committed with the record "consumer C processed event E" in one TransactWriteItems. It is
// safe for concurrent use by many goroutines.
type Consumer struct {
	core
	handler Handler
}

// New returns a Consumer committing the effects handler decides.
func New(db DB, handler Handler, cfg Config) (*Consumer, error) {
	c, err := newCore(db, cfg)
	if err != nil {
		return nil, err
	}
	if handler == nil {
		return nil, errors.New("idempotency: a Handler is required")
	}
	return &Consumer{core: c, handler: handler}, nil
}

// Apply applies one event, delivered as d, exactly once, and logs and counts its outcome once
// (idempotency.Consumer.Apply). The error is nil when the event is done with (applied,
// duplicate, rejected, ignored); marked permanent (IsPermanent) when it can never succeed
// (malformed, conflict, invalid effect), to be dead-lettered; and anything else when a delivery
// again may succeed.
func (c *Consumer) Apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) (Result, error) {
	return c.applyOnce(ctx, ev, d, func() (Result, error) { return c.apply(ctx, ev, d) })
}

func (c *Consumer) apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) (Result, error) {
	return c.redeciding(func() (Result, error) {
		p, res, done, err := c.prepare(ctx, ev, d)
		if done {
			return res, err
		}
		return c.commit(ctx, p)
	})
}

// prepare decides the effect of ev and builds its transaction; done is true (with the result)
// when there is nothing to commit: a duplicate (cached, or a redelivery its record answers), a
// malformed event, a failure.
func (c *Consumer) prepare(ctx context.Context, ev cloudevent.Event, d port.Delivery) (prepared, Result, bool, error) {
	res, hash, done, err := c.start(ev, d)
	if done {
		return prepared{}, res, true, err
	}
	fail := func(outcome Outcome, err error) (prepared, Result, bool, error) {
		res.Outcome = outcome
		return prepared{}, res, true, err
	}
	if res, done, err := c.answered(ctx, res, hash, d); done {
		return prepared{}, res, true, err
	}
	effect, reads, err := c.decide(ctx, ev)
	res.Commit += reads.took
	if err != nil {
		if unrouted(err) {
			res, err := c.ignore(ctx, res, hash, d, err)
			return prepared{}, res, true, err
		}
		if errors.Is(err, cloudevent.ErrMalformed) {
			return fail(Malformed, err) // a decided event is answered on its failure path (HoldGroup)
		}
		return fail(Failed, fmt.Errorf("decide effect of %s %s: %w", ev.Type, ev.ID, err))
	}
	if len(effect) == 0 && len(reads.items) == 0 {
		res, err := c.ignore(ctx, res, hash, d, errNoEffect)
		return prepared{}, res, true, err
	}
	rec := c.record(ev, d, hash, c.cfg.Now())
	record := itemRef{c.cfg.Table, canonicalKey(table.ItemKey(rec.Key))}
	items, err := effect.build(ev.Type, record)
	if err != nil {
		return fail(Failed, err)
	}
	items, checks, err := reads.conditioned(ev.Type, items, record, c.effectRoom(rec.Group))
	if err != nil {
		return fail(Failed, err)
	}
	p, err := c.withRecord(res, items, effect, rec)
	if err != nil {
		return fail(Failed, err)
	}
	p.checks = checks
	return p, res, false, nil
}
