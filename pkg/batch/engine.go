package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// Defaults of an Applier.
const (
	DefaultMaxAttempts = 5
	// PackWidth is how many groups a packing port runs at once when its Concurrency is lower:
	// the records of one SQS FIFO batch (at most 10) then share one transaction.
	PackWidth = 10
)

// Applier applies the events of a port's records with an idempotency.Engine, as every port
// does: a panic of the handler is a failed attempt; each failure is counted against the
// record's delivery and turns permanent ("failed N times: <err>") at MaxAttempts, except an
// access denial (idempotency.Denied), which is never counted; a permanent failure holds the
// record's group first, under the consumer's policy; and the events of one batch's workers
// commit together when the engine packs. It is safe for concurrent use.
type Applier struct {
	e           idempotency.Engine
	maxAttempts int
	pack        bool
}

// NewApplier returns an Applier of e. maxAttempts 0 means DefaultMaxAttempts; noPacking
// commits each event alone.
func NewApplier(e idempotency.Engine, maxAttempts int, noPacking bool) (*Applier, error) {
	if e == nil {
		return nil, errors.New("batch: the idempotency.Engine is nil")
	}
	if maxAttempts < 0 {
		return nil, fmt.Errorf("MaxAttempts is %d; want 1 or more (0 means %d)", maxAttempts, DefaultMaxAttempts)
	}
	if maxAttempts == 0 {
		maxAttempts = DefaultMaxAttempts
	}
	return &Applier{e: e, maxAttempts: maxAttempts, pack: !noPacking && e.Packs()}, nil
}

// Engine is the engine applied to.
func (a *Applier) Engine() idempotency.Engine { return a.e }

// MaxAttempts is how many failed attempts of a delivery make it permanent.
func (a *Applier) MaxAttempts() int { return a.maxAttempts }

// least is the fewest workers a batch should run: PackWidth when packing, so that a batch's
// groups share commits, else 0.
func (a *Applier) least() int {
	if a.pack {
		return PackWidth
	}
	return 0
}

// begin starts one batch run by workers goroutines: each calls Session.leave when it is done
// (work.Done).
func (a *Applier) begin(workers int) *Session {
	s := &Session{a: a}
	if a.pack {
		s.pack = a.e.NewPack(workers)
	}
	return s
}

// Session is one batch's use of an Applier: the pack its workers commit into.
type Session struct {
	a    *Applier
	pack *idempotency.Pack
}

// leave says one worker applies nothing more in this batch.
func (s *Session) leave(ctx context.Context) {
	if s.pack != nil {
		s.pack.Leave(ctx)
	}
}

// Apply applies ev delivered as d and returns the error the batch core decides on: nil, a
// transient error (the record is delivered again), or a permanent one (dead-lettered, its
// group held first under the consumer's policy). An event its consumer decided already is
// answered from its record on its failure path (idempotency.ErrDecided): nil.
func (s *Session) Apply(ctx context.Context, ev cloudevent.Event, d idempotency.Delivery) error {
	if _, err := s.recovered(ctx, ev, d); err != nil {
		return s.Hold(ctx, d, ev, s.count(ctx, d, ev, err))
	}
	return nil
}

// Hold holds d's group, under the consumer's HoldGroup policy, before a record that failed
// permanently for err is dead-lettered, and returns the error to report; ev is the record's
// event, or zero when it could not be decoded. A record refused because its group is held
// already holds nothing more. An event decided already is neither held nor dead-lettered: nil.
// A message an operator skipped is dead-lettered unheld, the reason saying so. When the hold
// cannot be written the record is not dead-lettered yet: it fails, and is retried; when the
// write was denied, the error carries the denial (idempotency.Denied), which the runner reports.
func (s *Session) Hold(ctx context.Context, d idempotency.Delivery, ev cloudevent.Event, err error) error {
	if !idempotency.IsPermanent(err) || errors.Is(err, idempotency.ErrHeld) {
		return err
	}
	held := idempotency.Held{EventID: ev.ID, MessageID: d.OriginID()}
	if ev.ID != "" {
		held.PayloadHash = ev.PayloadHash()
	}
	switch herr := s.a.e.HoldGroup(ctx, d.Group, held, err); {
	case herr == nil:
		return err
	case errors.Is(herr, idempotency.ErrDecided):
		return nil
	case errors.Is(herr, idempotency.ErrSkipped):
		return fmt.Errorf("%w; %v", err, herr)
	default:
		// The cause as %v, not %w: the record must not stay permanent, or it would be
		// dead-lettered unheld. A denial is kept: it is never permanent.
		if denial, ok := idempotency.Denied(herr); ok {
			return fmt.Errorf("not dead-lettered yet, holding its group was denied: %w; cause: %v", denial, err)
		}
		return fmt.Errorf("not dead-lettered yet, holding its group failed: %v; cause: %v", herr, err)
	}
}

// count counts a transient failure of the delivery and turns it permanent when it has failed
// MaxAttempts times (or more); an event decided already is not counted: nil. A held lease is
// not this delivery's failure: another is processing the event; nor is an access denial: the
// deployment's fault, never counted. When the count cannot be written, err is returned as it
// is (a denied count is reported here).
func (s *Session) count(ctx context.Context, d idempotency.Delivery, ev cloudevent.Event, err error) error {
	if idempotency.IsPermanent(err) || errors.Is(err, idempotency.ErrLeaseHeld) || idempotency.IsAccessDenied(err) {
		return err
	}
	n, cerr := s.a.e.CountMessageFailure(ctx, ev, d, err)
	if errors.Is(cerr, idempotency.ErrDecided) {
		return nil
	}
	if denial, ok := idempotency.Denied(cerr); ok {
		idempotency.LogDenied(ctx, s.a.e.Logger(), s.a.e.Metrics(), denial, "counting a failed attempt",
			slog.String("consumer", s.a.e.Name()), slog.String("messageId", d.MessageID),
			slog.String("eventId", ev.ID), slog.String("reason", err.Error()))
		return err
	}
	if cerr != nil {
		s.a.e.Logger().LogAttrs(ctx, slog.LevelWarn, "failed attempt not counted",
			slog.String("consumer", s.a.e.Name()), slog.String("messageId", d.MessageID),
			slog.String("eventId", ev.ID), slog.String("error", cerr.Error()))
		return err
	}
	if n < s.a.maxAttempts {
		return err
	}
	return idempotency.Permanent(fmt.Errorf("failed %d times: %w", n, err))
}

// recovered applies ev, turning a panic of the handler into an error (logged with its stack),
// so that it is counted as a failed attempt like any other failure.
func (s *Session) recovered(ctx context.Context, ev cloudevent.Event, d idempotency.Delivery) (res idempotency.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
			s.a.e.Logger().LogAttrs(ctx, slog.LevelError, "panic recovered",
				slog.String("consumer", s.a.e.Name()), slog.String("messageId", d.MessageID),
				slog.String("eventId", ev.ID), slog.String("reason", err.Error()), slog.String("stack", string(debug.Stack())))
		}
	}()
	if s.pack != nil {
		return s.pack.Apply(ctx, ev, d)
	}
	return s.a.e.Apply(ctx, ev, d)
}
