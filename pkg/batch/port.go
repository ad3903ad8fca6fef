package batch

import (
	"context"
	"errors"
)

// Port runs the records of one Lambda event of type R through a Runner and, when it has one,
// an Applier: a port (package sqsbatch, dynamodbbatch, kinesisbatch) is a Port and the mapping
// of its outcomes to its response. It is safe for concurrent use.
type Port[R any] struct {
	runner *Runner
	app    *Applier // nil: Handle runs without an engine
	// Item maps a record to what the core sees of it.
	item func(R) Item
	// handle handles one record; s is nil without an Applier.
	handle func(ctx context.Context, s *Session, rec R) error
	// deadLetter moves a record aside with its reason; nil: a permanent failure fails it.
	deadLetter func(ctx context.Context, rec R, reason error) error
}

// PortConfig builds a Port.
type PortConfig[R any] struct {
	Runner     *Runner
	Applier    *Applier // optional
	Item       func(R) Item
	Handle     func(ctx context.Context, s *Session, rec R) error
	DeadLetter func(ctx context.Context, rec R, reason error) error // optional
}

// NewPort returns the Port cfg describes.
func NewPort[R any](cfg PortConfig[R]) (*Port[R], error) {
	if cfg.Runner == nil || cfg.Item == nil || cfg.Handle == nil {
		return nil, errors.New("batch: a Port needs a Runner, Item and Handle")
	}
	return &Port[R]{runner: cfg.Runner, app: cfg.Applier, item: cfg.Item, handle: cfg.Handle, deadLetter: cfg.DeadLetter}, nil
}

// Run handles recs and returns each one's outcome, then flushes the metrics.
func (p *Port[R]) Run(ctx context.Context, recs []R) []Outcome {
	defer p.runner.flush(ctx)
	items := make([]Item, len(recs))
	for i, r := range recs {
		items[i] = p.item(r)
	}
	w := work{Items: items}
	var s *Session
	if p.app != nil {
		w.Workers = p.runner.workers(len(groupsOf(items)), p.app.least())
		s = p.app.begin(w.Workers)
		w.Done = func() { s.leave(ctx) }
	}
	w.Handle = func(ctx context.Context, i int) error { return p.handle(ctx, s, recs[i]) }
	if p.deadLetter != nil {
		w.DeadLetter = func(ctx context.Context, i int, reason error) error { return p.deadLetter(ctx, recs[i], reason) }
	}
	return p.runner.run(ctx, w)
}

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
