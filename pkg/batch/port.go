package batch

import (
	"context"
	"errors"

	"github.com/onceflow/onceflow/pkg/port"
)

// Port runs the records of one Lambda event of type R through a Runner and, when it has one,
// an engine (one port.Batch per run): a port (package sqsbatch, dynamodbbatch,
// kinesisbatch) is a Port and the mapping of its outcomes to its response. It is safe for
// concurrent use.
type Port[R any] struct {
	runner *Runner
	engine port.Engine // nil: Handle runs without an engine
	rules  port.Rules
	// Item maps a record to what the core sees of it.
	item func(R) Item
	// handle handles one record; b is nil without an engine.
	handle func(ctx context.Context, b port.Batch, rec R) error
	// deadLetter moves a record aside with its reason; nil: a permanent failure fails it.
	deadLetter func(ctx context.Context, rec R, reason error) error
}

// PortConfig builds a Port.
type PortConfig[R any] struct {
	Runner     *Runner
	Engine     port.Engine // optional: Handle is then given each run's Batch
	Rules      port.Rules  // the engine's rules of this port
	Item       func(R) Item
	Handle     func(ctx context.Context, b port.Batch, rec R) error
	DeadLetter func(ctx context.Context, rec R, reason error) error // optional
}

// NewPort returns the Port cfg describes.
func NewPort[R any](cfg PortConfig[R]) (*Port[R], error) {
	if cfg.Runner == nil || cfg.Item == nil || cfg.Handle == nil {
		return nil, errors.New("batch: a Port needs a Runner, Item and Handle")
	}
	if err := cfg.Rules.Validate(); err != nil {
		return nil, err
	}
	return &Port[R]{runner: cfg.Runner, engine: cfg.Engine, rules: cfg.Rules, item: cfg.Item, handle: cfg.Handle, deadLetter: cfg.DeadLetter}, nil
}

// Run handles recs and returns each one's outcome, then flushes the metrics.
func (p *Port[R]) Run(ctx context.Context, recs []R) []Outcome {
	defer p.runner.flush(ctx)
	items := make([]Item, len(recs))
	for i, r := range recs {
		items[i] = p.item(r)
	}
	w := work{Items: items}
	var b port.Batch
	if p.engine != nil {
		w.Workers = p.runner.workers(len(groupsOf(items)), p.least())
		b = p.engine.Begin(w.Workers, p.rules)
		w.Done = func() { b.Leave(ctx) }
	}
	w.Handle = func(ctx context.Context, i int) error { return p.handle(ctx, b, recs[i]) }
	if p.deadLetter != nil {
		w.DeadLetter = func(ctx context.Context, i int, reason error) error {
			send := func(ctx context.Context) error { return p.deadLetter(ctx, recs[i], reason) }
			if b == nil {
				return send(ctx)
			}
			sent, err := b.DeadLetter(ctx, items[i].Group, items[i].ID, send) // once per message
			if err == nil && !sent {
				return errSentAlready
			}
			return err
		}
	}
	return p.runner.run(ctx, w)
}

// least is the fewest workers a batch should run: port.PackWidth when the engine packs, so that a
// batch's groups share commits, else 0.
func (p *Port[R]) least() int {
	if !p.rules.NoPacking && p.engine.Packs() {
		return port.PackWidth
	}
	return 0
}

// errSentAlready is what a Port's dead-letter step returns for a record whose letter its
// engine sent on an earlier delivery (port.Batch.DeadLetter): nothing is sent again, and the
// record is acknowledged as dead-lettered.
var errSentAlready = errors.New("its dead letter was sent on an earlier delivery")

// FirstFailed is the index of the first record, in batch order, not acknowledged; -1 when
// every one was. A stream port reports its sequence number: Lambda checkpoints the shard
// before it and delivers again from there.
func FirstFailed(out []Outcome) int {
	for i, o := range out {
		if o != Acked {
			return i
		}
	}
	return -1
}
