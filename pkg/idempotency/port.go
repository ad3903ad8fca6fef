package idempotency

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/metrics"
)

// Engine is the contract between a port (a source of events: an SQS queue, a DynamoDB stream,
// a Kinesis stream, one of your own) and a consumer. A port begins a batch, and for each of
// its deliveries calls Batch.Apply (or Batch.Fail, when it could not make an event of it) and
// does what the answer says: acknowledge it (nil), deliver it again (an error), or dead-letter
// it (a permanent error, IsPermanent). Everything else is the engine's: counting a delivery's
// failed attempts and turning them permanent at Rules.MaxAttempts, holding an ordered group
// behind what is dead-lettered (under Config.AfterDeadLetter), answering an event decided
// already from its record, recovering a handler's panic, and committing the events of a
// batch's workers together. *Consumer and *LeasedConsumer implement it. Every method is safe
// for concurrent use.
type Engine interface {
	// Name is the consumer's name.
	Name() string
	// Begin starts one batch whose deliveries workers goroutines apply, each calling
	// Batch.Leave once it applies nothing more.
	Begin(workers int, r Rules) Batch
	// Packs reports whether a batch's workers share commits (a Consumer's do; a
	// LeasedConsumer applies each event alone): a port then runs at least as many workers as
	// the batch has groups, up to PackWidth, so that their next events commit together.
	Packs() bool
	// HoldAhead holds group, in order, behind deliveries the transport may move aside by
	// itself before they are handled (an SQS queue's messages on their last receives before
	// its maxReceiveCount), each known by its Delivery.OriginID; one on the list already
	// keeps its place, and each delivery's commit takes it off. It reports whether the
	// deliveries are listed (or, with an error, may be): false, writing nothing, when the
	// consumer holds no groups (GoOn), for an empty group or an empty list.
	HoldAhead(ctx context.Context, group string, held []Held) (bool, error)
	// Logger is where the consumer logs (Config.Logger); a port logs there too.
	Logger() *slog.Logger
	// Metrics is the consumer's recorder (Config.Metrics); a port counts there too and
	// flushes it after a batch.
	Metrics() metrics.Recorder
}

// Batch is one batch's use of an Engine, by the workers that apply its deliveries.
type Batch interface {
	// Apply applies ev delivered as d and returns what the port does with the delivery: nil
	// (acknowledge it: applied, a duplicate, rejected, or decided already), a transient error
	// (deliver it again), or a permanent one (IsPermanent: dead-letter it with the error as
	// its reason, its group held first under the consumer's policy; a delivery refused
	// because its group is held, ErrHeld, holds nothing more). A delivery received more than
	// MaxAttempts times (Delivery.ReceiveCount) whose failures reached MaxAttempts already is
	// dead-lettered without being applied again. A worker applies one event at a time.
	Apply(ctx context.Context, ev cloudevent.Event, d Delivery) error
	// Fail reports a delivery the port could not apply, for err (its payload could not be
	// read, its body is not an event: a permanent error, such as a *cloudevent.MalformedError,
	// when it never will be); ev is its event when it was decoded, else zero. It returns
	// what the port does with it, as Apply does: a permanent err holds d's group first, a
	// transient one is returned as it is, and is not counted.
	Fail(ctx context.Context, d Delivery, ev cloudevent.Event, err error) error
	// Leave says one worker applies nothing more in this batch.
	Leave(ctx context.Context)
}

// Rules say how the engine treats the failures of one port's deliveries. The zero value is
// the default.
type Rules struct {
	// MaxAttempts is how many failed attempts of one delivery make it permanent ("failed N
	// times: <last error>"). 0 means DefaultMaxAttempts.
	MaxAttempts int
	// NoPacking commits each event alone, even on an engine that packs (Engine.Packs).
	NoPacking bool
}

// Defaults of Rules and of a packing port.
const (
	DefaultMaxAttempts = 5
	// PackWidth is how many groups a port on an engine that packs runs at once when its
	// concurrency is lower: the records of one SQS FIFO batch (at most 10) then share one
	// transaction.
	PackWidth = 10
)

// Validate reports what is wrong with r.
func (r Rules) Validate() error {
	if r.MaxAttempts < 0 {
		return fmt.Errorf("MaxAttempts is %d; want 1 or more (0 means %d)", r.MaxAttempts, DefaultMaxAttempts)
	}
	return nil
}

// maxAttempts is r.MaxAttempts, or its default.
func (r Rules) maxAttempts() int {
	if r.MaxAttempts <= 0 {
		return DefaultMaxAttempts
	}
	return r.MaxAttempts
}

var (
	_ Engine = (*Consumer)(nil)
	_ Engine = (*LeasedConsumer)(nil)
)

// Logger is where the consumer logs (Config.Logger).
func (c *core) Logger() *slog.Logger { return c.cfg.Logger }

// Metrics is the consumer's recorder (Config.Metrics).
func (c *core) Metrics() metrics.Recorder { return c.cfg.Metrics }

// HoldAhead is Engine.HoldAhead: HoldMessages, when the consumer holds groups.
func (c *core) HoldAhead(ctx context.Context, group string, held []Held) (bool, error) {
	if !c.HoldsGroups() || group == "" || len(held) == 0 {
		return false, nil
	}
	return true, c.HoldMessages(ctx, group, held)
}

// Packs reports true: a Consumer's batches share TransactWriteItems calls.
func (c *Consumer) Packs() bool { return true }

// Packs reports false: a LeasedConsumer applies each event alone.
func (c *LeasedConsumer) Packs() bool { return false }

// NewPack returns a pack whose members apply events one at a time, each alone.
func (c *LeasedConsumer) NewPack(int) *Pack { return &Pack{alone: c} }

// Begin starts a batch of c's (Engine.Begin): its workers' commits packed unless r.NoPacking.
func (c *Consumer) Begin(workers int, r Rules) Batch { return c.begin(c, workers, r) }

// Begin starts a batch of c's (Engine.Begin): each event applied alone.
func (c *LeasedConsumer) Begin(workers int, r Rules) Batch { return c.begin(c, workers, r) }
