package lease

import "github.com/onceflow/onceflow/pkg/internal/engine"

// WithClock makes a consumer's lease run on clk: the times it writes (Config.Now), when it
// runs out on this host, its heartbeat and each extension's time limit.
func WithClock(clk engine.Clock) func(*Config) {
	return func(c *Config) { c.clock, c.Now = clk, clk.Now }
}
