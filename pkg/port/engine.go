package port

import (
	"context"
	"log/slog"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/metrics"
)

// Engine is a consumer as a port drives it. A port begins a batch, and for each of its
// deliveries calls Batch.Apply (or Batch.Fail, when it could not make an event of it) and
// does what the answer says: acknowledge it (nil), deliver it again (an error), or dead-letter
// it (a permanent error, idempotency.IsPermanent). Everything else is the engine's: counting a
// delivery's failed attempts and turning them permanent at Rules.MaxAttempts, holding an
// ordered group behind what is dead-lettered (under idempotency.HoldGroup), answering an event
// decided already from its record, recovering a handler's panic, and committing the events of
// a batch's workers together. idempotency.Consumer.Engine and lease.Consumer.Engine return
// one. Every method is safe for concurrent use.
type Engine interface {
	// Name is the consumer's name.
	Name() string
	// Begin starts one batch whose deliveries workers goroutines apply, each calling
	// Batch.Leave once it applies nothing more.
	Begin(workers int, r Rules) Batch
	// Packs reports whether a batch's workers share commits (an idempotency.Consumer's do; a
	// lease.Consumer applies each event alone): a port then runs at least as many workers as
	// the batch has groups, up to PackWidth, so that their next events commit together.
	Packs() bool
	// HoldAhead holds group, in order, behind deliveries the transport may move aside by
	// itself before they are handled (an SQS queue's messages on their last receives before
	// its maxReceiveCount), each known by its Delivery.OriginID; one on the list already
	// keeps its place, and each delivery's commit takes it off. It reports whether the
	// deliveries are listed (or, with an error, may be): false, writing nothing, when the
	// consumer holds no groups (idempotency.GoOn), for an empty group or an empty list.
	HoldAhead(ctx context.Context, group string, held []Held) (bool, error)
	// Logger is where the consumer logs (idempotency.Config.Logger); a port logs there too.
	Logger() *slog.Logger
	// Metrics is the consumer's recorder (idempotency.Config.Metrics); a port counts there
	// too and flushes it after a batch.
	Metrics() metrics.Recorder
}

// Batch is one batch's use of an Engine, by the workers that apply its deliveries.
type Batch interface {
	// Apply applies ev delivered as d and returns what the port does with the delivery: nil
	// (acknowledge it: applied, a duplicate, rejected, or decided already), a transient error
	// (deliver it again), or a permanent one (idempotency.IsPermanent: dead-letter it with the
	// error as its reason, its group held first under the consumer's policy; a delivery
	// refused because its group is held, idempotency.ErrHeld, holds nothing more). A delivery
	// received more than MaxAttempts times (Delivery.ReceiveCount) whose failures reached
	// MaxAttempts already is dead-lettered without being applied again. A worker applies one
	// event at a time.
	Apply(ctx context.Context, ev cloudevent.Event, d Delivery) error
	// Fail reports a delivery the port could not apply, for err (its payload could not be
	// read, its body is not an event: a permanent error, such as a *cloudevent.MalformedError,
	// when it never will be); ev is its event when it was decoded, else zero. It returns
	// what the port does with it, as Apply does: a permanent err holds d's group first, a
	// transient one is returned as it is, and is not counted.
	Fail(ctx context.Context, d Delivery, ev cloudevent.Event, err error) error
	// DeadLetter dead-letters delivery messageID (the transport's id of the delivery itself)
	// of group with send, the port's send of its letter, once per message, and reports
	// whether it sent it: a message whose letter the consumer sent already (delivered again
	// because its batch crashed after the send) sends nothing (false, nil), and the port
	// acknowledges it as dead-lettered. It notes each letter sent, after send returns nil; a
	// note it cannot read or write only lets a later delivery of the message send a second
	// letter.
	DeadLetter(ctx context.Context, group, messageID string, send func(context.Context) error) (sent bool, err error)
	// Leave says one worker applies nothing more in this batch.
	Leave(ctx context.Context)
}
