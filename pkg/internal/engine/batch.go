package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/port"
)

// applier is what a batch needs of a mode beyond the core: applying one event, alone or in a
// pack.
type applier interface {
	Apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) (Result, error)
	NewPack(members int) *Pack
	Packs() bool
}

// batch is port.Engine.Begin's Batch: the rules of one port over the core of a mode, and the pack
// its workers commit into (nil: each event alone).
type batch struct {
	c     *core
	apply applier
	max   int
	pack  *Pack
}

func (c *core) begin(a applier, workers int, r port.Rules) *batch {
	b := &batch{c: c, apply: a, max: maxAttempts(r)}
	if !r.NoPacking && a.Packs() {
		b.pack = a.NewPack(workers)
	}
	return b
}

// DeadLetter is Batch.DeadLetter: core.DeadLetterOnce.
func (b *batch) DeadLetter(ctx context.Context, group, messageID string, send func(context.Context) error) (bool, error) {
	return b.c.DeadLetterOnce(ctx, group, messageID, send)
}

// Leave is Batch.Leave.
func (b *batch) Leave(ctx context.Context) {
	if b.pack != nil {
		b.pack.Leave(ctx)
	}
}

// Apply is Batch.Apply: a delivery received more often than MaxAttempts whose failures
// reached it already (its last one could not be dead-lettered then) goes to hold and
// dead-letter without running its handler again; any other is applied, and its failure
// counted.
func (b *batch) Apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) error {
	if err := b.exhausted(ctx, ev.ID, d); err != nil {
		return b.Fail(ctx, d, ev, err)
	}
	if _, err := b.recovered(ctx, ev, d); err != nil {
		return b.Fail(ctx, d, ev, b.count(ctx, d, ev, err))
	}
	return nil
}

// Fail is Batch.Fail: a permanent err holds d's group under the consumer's policy before the
// delivery is dead-lettered. A delivery refused because its group is held already holds
// nothing more. An event decided already is neither held nor dead-lettered: nil. A message an
// operator skipped is dead-lettered unheld, the reason saying so. When the hold cannot be
// written the delivery is not dead-lettered yet: it fails, and is retried; when the write was
// denied, the error carries the denial (denied.Of).
func (b *batch) Fail(ctx context.Context, d port.Delivery, ev cloudevent.Event, err error) error {
	if !IsPermanent(err) || errors.Is(err, ErrHeld) {
		return err
	}
	held := holdlist.Held{EventID: ev.ID, MessageID: d.OriginID()}
	if ev.ID != "" {
		held.PayloadHash = ev.PayloadHash()
	}
	switch herr := b.c.HoldGroup(ctx, d.Group, held, err); {
	case herr == nil:
		return err
	case errors.Is(herr, ErrDecided):
		return nil
	case errors.Is(herr, ErrSkipped):
		return fmt.Errorf("%w; %v", err, herr)
	default:
		// The cause as %v, not %w: the delivery must not stay permanent, or it would be
		// dead-lettered unheld. A denial is kept: it is never permanent.
		if denial, ok := denied.Of(herr); ok {
			return fmt.Errorf("not dead-lettered yet, holding its group was denied: %w; cause: %v", denial, err)
		}
		return fmt.Errorf("not dead-lettered yet, holding its group failed: %v; cause: %v", herr, err)
	}
}

// count counts a transient failure of the delivery and turns it permanent when it has failed
// MaxAttempts times (or more); an event decided already is not counted: nil. A held lease is
// not this delivery's failure: another is processing the event; nor is a read that kept
// changing under concurrent writers (ErrReadChanged), nor an access denial: the deployment's
// fault, never counted. When the count cannot be written, err is returned as it
// is (a denied count is logged as a denial).
func (b *batch) count(ctx context.Context, d port.Delivery, ev cloudevent.Event, err error) error {
	if IsPermanent(err) || errors.Is(err, ErrLeaseHeld) || errors.Is(err, ErrReadChanged) || denied.Is(err) {
		return err
	}
	n, cerr := b.c.CountMessageFailure(ctx, ev, d, err)
	if errors.Is(cerr, ErrDecided) {
		return nil
	}
	if denial, ok := denied.Of(cerr); ok {
		denied.Log(ctx, b.c.Logger(), b.c.Metrics(), denial, "counting a failed attempt",
			slog.String("consumer", b.c.Name()), slog.String("messageId", d.MessageID),
			slog.String("eventId", ev.ID), slog.String("reason", err.Error()))
		return err
	}
	if cerr != nil {
		b.c.Logger().LogAttrs(ctx, slog.LevelWarn, "failed attempt not counted",
			slog.String("consumer", b.c.Name()), slog.String("messageId", d.MessageID),
			slog.String("eventId", ev.ID), slog.String("error", cerr.Error()))
		return err
	}
	if n < b.max {
		return err
	}
	return Permanent(fmt.Errorf("failed %d times: %w", n, err))
}

// exhausted returns the permanent error of a delivery that has failed MaxAttempts times
// already, and nil for any other. Only a delivery received more than MaxAttempts times can
// have (each own failure is one receive), so it costs a read on those receives only. When the
// count cannot be read the delivery is applied as usual.
func (b *batch) exhausted(ctx context.Context, eventID string, d port.Delivery) error {
	if d.ReceiveCount <= b.max {
		return nil
	}
	n, last, err := b.c.MessageFailures(ctx, eventID, d.MessageID)
	if denial, ok := denied.Of(err); ok {
		denied.Log(ctx, b.c.Logger(), b.c.Metrics(), denial, "reading the failed attempts, message handled",
			slog.String("consumer", b.c.Name()), slog.String("messageId", d.MessageID), slog.String("eventId", eventID))
		return nil
	}
	if err != nil {
		b.c.Logger().LogAttrs(ctx, slog.LevelWarn, "failed attempts not read, message handled",
			slog.String("consumer", b.c.Name()), slog.String("messageId", d.MessageID),
			slog.String("eventId", eventID), slog.String("error", err.Error()))
		return nil
	}
	if n < b.max {
		return nil
	}
	return Permanent(fmt.Errorf("failed %d times: %s", n, last))
}

// recovered applies ev, turning a panic of the handler into an error (logged with its stack),
// so that it is counted as a failed attempt like any other failure.
func (b *batch) recovered(ctx context.Context, ev cloudevent.Event, d port.Delivery) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
			b.c.Logger().LogAttrs(ctx, slog.LevelError, "panic recovered",
				slog.String("consumer", b.c.Name()), slog.String("messageId", d.MessageID),
				slog.String("eventId", ev.ID), slog.String("reason", err.Error()), slog.String("stack", string(debug.Stack())))
		}
	}()
	if b.pack != nil {
		return b.pack.Apply(ctx, ev, d)
	}
	return b.apply.Apply(ctx, ev, d)
}
