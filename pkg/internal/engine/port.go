package engine

import (
	"context"
	"log/slog"

	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/port"
)

// maxAttempts is r.MaxAttempts, or its default.
func maxAttempts(r port.Rules) int {
	if r.MaxAttempts <= 0 {
		return port.DefaultMaxAttempts
	}
	return r.MaxAttempts
}

var (
	_ port.Engine = (*Consumer)(nil)
	_ port.Engine = (*LeasedConsumer)(nil)
)

// Logger is where the consumer logs (Config.Logger).
func (c *core) Logger() *slog.Logger { return c.cfg.Logger }

// Metrics is the consumer's recorder (Config.Metrics).
func (c *core) Metrics() metrics.Recorder { return c.cfg.Metrics }

// HoldAhead is port.Engine.HoldAhead: HoldMessages, when the consumer holds groups.
func (c *core) HoldAhead(ctx context.Context, group string, held []port.Held) (bool, error) {
	if !c.HoldsGroups() || group == "" || len(held) == 0 {
		return false, nil
	}
	list := make([]holdlist.Held, len(held))
	for i, e := range held {
		list[i] = holdlist.FromPort(e)
	}
	return true, c.HoldMessages(ctx, group, list)
}

// Packs reports true: a Consumer's batches share TransactWriteItems calls.
func (c *Consumer) Packs() bool { return true }

// Packs reports false: a LeasedConsumer applies each event alone.
func (c *LeasedConsumer) Packs() bool { return false }

// NewPack returns a pack whose members apply events one at a time, each alone.
func (c *LeasedConsumer) NewPack(int) *Pack { return &Pack{alone: c} }

// Begin starts a batch of c's (port.Engine.Begin): its workers' commits packed unless r.NoPacking.
func (c *Consumer) Begin(workers int, r port.Rules) port.Batch { return c.begin(c, workers, r) }

// Begin starts a batch of c's (port.Engine.Begin): each event applied alone.
func (c *LeasedConsumer) Begin(workers int, r port.Rules) port.Batch { return c.begin(c, workers, r) }
