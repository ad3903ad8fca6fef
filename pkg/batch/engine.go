package batch

import "github.com/onceflow/onceflow/pkg/port"

// Rules are the engine's rules of opts' port: how many failed attempts make a delivery
// permanent, and whether its workers' commits are packed.
func (o Options) Rules() port.Rules {
	return port.Rules{MaxAttempts: o.MaxAttempts, NoPacking: o.NoPacking}
}
