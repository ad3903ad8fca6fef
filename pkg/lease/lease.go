package lease

import (
	"context"
	"time"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/engine"
	"github.com/onceflow/onceflow/pkg/port"
)

// SideEffect runs an effect that cannot join a DynamoDB transaction: an HTTP call, an
// e-mail. key is the idempotency key of the event for this consumer; the effect passes it
// (or a value derived from it) downstream, so that a receiver can drop the repeat a crash
// between the call and its completion makes unavoidable. ctx ends when the lease is lost or
// runs out: the effect must stop then. An error marked idempotency.Permanent (a
// cloudevent.MalformedError is) dead-letters the message; any other error fails it so it is
// delivered again. Side effects are called concurrently for different events.
type SideEffect interface {
	Run(ctx context.Context, ev cloudevent.Event, key string) error
}

// SideEffectFunc adapts a function to SideEffect.
type SideEffectFunc func(ctx context.Context, ev cloudevent.Event, key string) error

// Run calls f.
func (f SideEffectFunc) Run(ctx context.Context, ev cloudevent.Event, key string) error {
	return f(ctx, ev, key)
}

// Lease lengths.
const (
	// DefaultMargin is added to the invocation's remaining time to make the default lease.
	DefaultMargin = 2 * time.Second
	// MaxLength is the lease when neither Config.Lease nor a context deadline sets one: the
	// longest a Lambda invocation can run.
	MaxLength = 15 * time.Minute
)

// Config configures a Consumer: the settings both modes share, and the lease. The zero value
// of every lease field means its default. AfterDeadLetter must be idempotency.GoOn.
type Config struct {
	idempotency.Config
	// Lease is how long a claim holds the record before another delivery may take it over.
	// Default: the invocation's remaining time (the context's deadline) plus LeaseMargin.
	// Without a Heartbeat the effect's context ends when the lease does.
	Lease time.Duration
	// LeaseMargin is added to the remaining time for the default lease. Default
	// DefaultMargin.
	LeaseMargin time.Duration
	// Heartbeat, when positive, extends the lease by Lease every Heartbeat while the effect
	// runs, conditional on still owning it; losing the lease cancels the effect's context.
	// It must be shorter than Lease.
	Heartbeat time.Duration
	// WaitForCompletion bounds how long a delivery that finds another owner's live lease
	// polls for that owner to finish (a duplicate then) before it fails the message. Default
	// 0: fail at once, and let SQS redeliver it after the visibility timeout.
	WaitForCompletion time.Duration

	clock engine.Clock // times the lease on this host; nil: the real clock (set by tests)
}

// Validate reports every problem with c.
func (c Config) Validate() error { return c.engine().Validate() }

// engine is c as the engine takes it.
func (c Config) engine() engine.LeaseConfig {
	s := c.Config
	return engine.LeaseConfig{Config: engine.Config{Name: s.Name, Table: s.Table, Retention: s.Retention, CacheSize: s.CacheSize,
		StorePayload: s.StorePayload, AfterDeadLetter: engine.GroupPolicy(s.AfterDeadLetter), Retry: engine.Retry(s.Retry), Logger: s.Logger,
		Metrics: s.Metrics, Now: s.Now}, Lease: c.Lease, LeaseMargin: c.LeaseMargin, Heartbeat: c.Heartbeat, WaitForCompletion: c.WaitForCompletion, Clock: c.clock}
}

// The lease's failures, as errors.Is matches them. Neither is permanent: the message is
// delivered again.
var (
	// ErrHeld: another owner holds a live lease on the record, the event being processed
	// elsewhere right now. A delivery again finds it completed (a duplicate then), or released
	// or lost (processed then).
	ErrHeld = engine.ErrLeaseHeld
	// ErrLost: this owner no longer holds the lease when it tried to complete, release or
	// extend it (it expired and another owner took the record over, or the record is gone).
	// Nothing was written; the side effect may have run. The lease was too short for the
	// effect: lengthen it or add a Heartbeat.
	ErrLost = engine.ErrLeaseLost
)

// Consumer applies a SideEffect at most once per lease and records its completion. It is safe
// for concurrent use.
type Consumer struct {
	e *engine.LeasedConsumer
}

// New returns a Consumer running effect under a lease on its record in db.
func New(db idempotency.DB, effect SideEffect, cfg Config) (*Consumer, error) {
	e, err := engine.NewLeased(db, effect, cfg.engine())
	if err != nil {
		return nil, err
	}
	return &Consumer{e: e}, nil
}

// Apply runs the side effect of one event, delivered as d, under a lease, and logs and counts
// its outcome once. The error contract is idempotency.Consumer.Apply's: nil when done with
// (applied, duplicate); permanent when it can never succeed (malformed, conflict, an effect
// error marked idempotency.Permanent); anything else (ErrHeld, ErrLost, a failed effect) when
// a delivery again may succeed.
func (c *Consumer) Apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) (idempotency.Result, error) {
	r, err := c.e.Apply(ctx, ev, d)
	return idempotency.Result{Outcome: idempotency.Outcome(r.Outcome), Key: r.Key, EventID: r.EventID, Reason: r.Reason,
		Stored: idempotency.Outcome(r.Stored), Commit: r.Commit}, err
}

// Engine is the consumer as a port drives it (package port): sqsbatch.NewFor,
// dynamodbbatch.New and kinesisbatch.New take it. Its batches apply each event alone.
func (c *Consumer) Engine() port.Engine { return c.e }
