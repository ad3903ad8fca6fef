package batch

import (
	"github.com/onceflow/onceflow/pkg/port"
)

// Defaults of a port on an engine (port.Rules).
const (
	DefaultMaxAttempts = port.DefaultMaxAttempts
	// PackWidth is how many groups a port on an engine that packs runs at once when its
	// Concurrency is lower: the records of one SQS FIFO batch (at most 10) then share one
	// transaction.
	PackWidth = port.PackWidth
)

// Rules are the engine's rules of opts' port: how many failed attempts make a delivery
// permanent, and whether its workers' commits are packed.
func (o Options) Rules() port.Rules {
	return port.Rules{MaxAttempts: o.MaxAttempts, NoPacking: o.NoPacking}
}
