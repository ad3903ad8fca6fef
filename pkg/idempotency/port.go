package idempotency

import (
	"context"
	"log/slog"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/metrics"
)

// Engine is the contract between a port (a source of events: an SQS queue, a DynamoDB stream,
// a Kinesis stream) and a consumer: everything a port may ask of the engine, so that a port
// written anywhere, given an Engine, gets every feature: applying an event, counting a
// delivery's failed attempts, holding an ordered group behind a dead letter (and before a
// delivery the transport may move by itself), committing concurrent events together, and the
// consumer's own logger and metrics. *Consumer and *LeasedConsumer implement it; a port takes
// an Engine, so a type that lacks a feature is refused when the port is built (by the
// compiler). Every method is safe for concurrent use.
type Engine interface {
	// Name is the consumer name.
	Name() string
	// Apply applies one event, delivered as d, exactly once (see Consumer.Apply).
	Apply(ctx context.Context, ev cloudevent.Event, d Delivery) (Result, error)
	// CountMessageFailure counts one failed attempt of event ev carried by delivery d and
	// returns how many this delivery (d.MessageID: an SQS message id, a stream record's id)
	// has had: a port dead-letters the delivery once the count reaches its limit. An event
	// decided already is not counted: a *DecidedError (ErrDecided), and the port acknowledges
	// the delivery.
	CountMessageFailure(ctx context.Context, ev cloudevent.Event, d Delivery, cause error) (int, error)
	// MessageFailures returns the failed attempts counted for the delivery, and the last one's
	// error.
	MessageFailures(ctx context.Context, eventID, messageID string) (int, string, error)
	// HoldGroup holds group behind a delivery about to be dead-lettered for reason (held:
	// its event id and payload hash, when it was decoded, and Delivery.OriginID), under the
	// consumer's AfterDeadLetter policy; it does nothing under GoOn. An event decided already
	// is neither held nor to be dead-lettered: a *DecidedError (ErrDecided), and the port
	// acknowledges the delivery. A message an operator skipped is not held: a *SkippedError
	// (ErrSkipped), and the port dead-letters it with that reason.
	HoldGroup(ctx context.Context, group string, held Held, reason error) error
	// HoldMessages holds group behind each of held in order, under the AfterDeadLetter policy
	// (a port's backstop before the transport may move them by itself); a message on the list
	// already keeps its place.
	HoldMessages(ctx context.Context, group string, held []Held) error
	// HoldsGroups reports whether the policy is HoldGroup.
	HoldsGroups() bool
	// Packs reports whether a Pack of this consumer shares commits (a Consumer's does; a
	// LeasedConsumer's applies each event alone: its lease and completion are two writes).
	Packs() bool
	// NewPack returns a pack for members goroutines applying the events of one batch.
	NewPack(members int) *Pack
	// Logger is where the consumer logs; a port logs there too.
	Logger() *slog.Logger
	// Metrics is the consumer's recorder; a port counts there too and flushes it after a batch.
	Metrics() metrics.Recorder
}

var (
	_ Engine = (*Consumer)(nil)
	_ Engine = (*LeasedConsumer)(nil)
)

// Logger is where the consumer logs (Config.Logger).
func (c *core) Logger() *slog.Logger { return c.cfg.Logger }

// Metrics is the consumer's recorder (Config.Metrics).
func (c *core) Metrics() metrics.Recorder { return c.cfg.Metrics }

// Packs reports true: a Consumer's packs share TransactWriteItems calls.
func (c *Consumer) Packs() bool { return true }

// Packs reports false: a LeasedConsumer's pack applies each event alone.
func (c *LeasedConsumer) Packs() bool { return false }

// NewPack returns a pack whose members apply events one at a time, each alone.
func (c *LeasedConsumer) NewPack(int) *Pack { return &Pack{alone: c} }
