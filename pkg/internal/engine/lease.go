package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/port"
)

// SideEffect runs an effect that cannot join a DynamoDB transaction (lease.SideEffect). ctx
// ends when the lease is lost or runs out. It is called concurrently for different events.
type SideEffect interface {
	Run(ctx context.Context, ev cloudevent.Event, key string) error
}

// Lease lengths.
const (
	// DefaultLeaseMargin is added to the invocation's remaining time to make the default lease.
	DefaultLeaseMargin = 2 * time.Second
	// MaxLease is the lease when neither LeaseConfig.Lease nor a context deadline sets one:
	// the longest a Lambda invocation can run.
	MaxLease = 15 * time.Minute
)

// LeaseConfig configures a LeasedConsumer (lease.Config): the settings both modes share, and
// the lease. The zero value of every lease field means its default.
type LeaseConfig struct {
	Config
	// Lease is how long a claim holds the record before another delivery may take it over.
	// Default: the invocation's remaining time (the context's deadline) plus LeaseMargin.
	// Without a Heartbeat the effect's context ends when the lease does.
	Lease time.Duration
	// LeaseMargin is added to the remaining time for the default lease. Default
	// DefaultLeaseMargin.
	LeaseMargin time.Duration
	// Heartbeat, when positive, extends the lease by Lease every Heartbeat while the effect
	// runs, conditional on still owning it; losing the lease cancels the effect's context.
	// It must be shorter than Lease.
	Heartbeat time.Duration
	// WaitForCompletion bounds how long a delivery that finds another owner's live lease
	// polls for that owner to finish (a duplicate then) before it fails the message. Default
	// 0: fail at once, and let SQS redeliver it after the visibility timeout.
	WaitForCompletion time.Duration
	// Clock times the lease on this host: when it runs out, its heartbeat and extensions.
	// Default: the real clock. Tests set their own (lease's test seam).
	Clock Clock
}

func (c LeaseConfig) withDefaults() LeaseConfig {
	c.Config = c.Config.withDefaults()
	if c.Clock == nil {
		c.Clock = realClock{}
	}
	if c.LeaseMargin == 0 {
		c.LeaseMargin = DefaultLeaseMargin
	}
	return c
}

// Validate reports every problem with c.
func (c LeaseConfig) Validate() error {
	errs := []error{c.Config.Validate()}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"lease", c.Lease}, {"lease margin", c.LeaseMargin}, {"heartbeat", c.Heartbeat}, {"wait for completion", c.WaitForCompletion}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s %v is negative", d.name, d.v))
		}
	}
	if c.AfterDeadLetter == HoldGroup {
		errs = append(errs, errors.New("AfterDeadLetter HoldGroup is not supported in lease mode; use GoOn"))
	}
	if c.Heartbeat > 0 && c.Lease > 0 && c.Heartbeat >= c.Lease {
		errs = append(errs, fmt.Errorf("heartbeat %v must be shorter than the lease %v", c.Heartbeat, c.Lease))
	}
	return errors.Join(errs...)
}

// LeasedConsumer applies a SideEffect at most once per lease and records its completion, the
// idempotent consumer for effects outside DynamoDB (lease.Consumer): a fenced lease. A delivery claims the
// record with a random owner token; completion and release are conditional on that token, so
// a late owner can never overwrite or delete another's record. It is safe for concurrent use.
type LeasedConsumer struct {
	core
	effect SideEffect
	lease  LeaseConfig
}

// NewLeased returns a LeasedConsumer running effect under a lease on its record in db.
func NewLeased(db DB, effect SideEffect, cfg LeaseConfig) (*LeasedConsumer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("idempotency config: %w", err)
	}
	c, err := newCore(db, cfg.Config)
	if err != nil {
		return nil, err
	}
	if effect == nil {
		return nil, errors.New("idempotency: a SideEffect is required")
	}
	return &LeasedConsumer{core: c, effect: effect, lease: cfg}, nil
}

// Apply runs the side effect of one event, delivered as d, under a lease, and logs and counts
// its outcome once. The error contract is Consumer.Apply's: nil when done with (applied,
// duplicate); permanent when it can never succeed (malformed, conflict, an effect error marked
// Permanent); anything else (ErrLeaseHeld, ErrLeaseLost, a failed effect) when a delivery
// again may succeed.
func (c *LeasedConsumer) Apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) (Result, error) {
	return c.applyOnce(ctx, ev, d, func() (Result, error) { return c.apply(ctx, ev, d) })
}

func (c *LeasedConsumer) apply(ctx context.Context, ev cloudevent.Event, d port.Delivery) (Result, error) {
	res, hash, done, err := c.start(ev, d)
	if done {
		return res, err
	}
	l, res, err := c.acquire(ctx, res, c.record(ev, d, hash, c.cfg.Now()))
	if l == nil {
		return res, err
	}
	return c.run(ctx, res, ev, l)
}

// run runs the effect under the lease, then completes the record, or releases it when the
// effect failed.
func (c *LeasedConsumer) run(ctx context.Context, res Result, ev cloudevent.Event, l *lease) (Result, error) {
	effectCtx, stop := c.hold(ctx, l)
	err := c.effect.Run(effectCtx, ev, l.rec.Key)
	lost := stop()
	finishCtx, cancel := detached(ctx, c.lease.LeaseMargin, c.cfg.Retry.Margin/2)
	defer cancel()
	if err == nil {
		return c.complete(finishCtx, res, l) // after a lost heartbeat, completion reports it
	}
	res.Outcome = Failed
	if errors.Is(err, cloudevent.ErrMalformed) {
		res.Outcome = Malformed
	}
	err = fmt.Errorf("side effect of %s %s: %w", ev.Type, ev.ID, err)
	if lost != nil {
		return res, errors.Join(err, lost) // not ours to release any more
	}
	if rerr := c.release(finishCtx, &res, l); rerr != nil {
		return res, errors.Join(err, rerr)
	}
	return res, err
}

// detached returns a context for completing or releasing a record after the effect: not
// cancelled with ctx (an effect that ran out of time must still be recorded or released),
// and ending report before ctx's deadline (the invocation's end: the effect stopped
// Retry.Margin before it, so a hung call still leaves time to report the message), or after
// grace when ctx has none.
func detached(ctx context.Context, grace, report time.Duration) (context.Context, context.CancelFunc) {
	end, ok := ctx.Deadline()
	if !ok {
		return context.WithTimeout(context.WithoutCancel(ctx), grace)
	}
	return context.WithDeadline(context.WithoutCancel(ctx), end.Add(-report))
}
