package port

import "fmt"

// Rules say how the engine treats the failures of one port's deliveries. The zero value is
// the default.
type Rules struct {
	// MaxAttempts is how many failed attempts of one delivery make it permanent ("failed N
	// times: <last error>"). 0 means DefaultMaxAttempts.
	MaxAttempts int
	// NoPacking commits each event alone, even on an engine that packs (Engine.Packs).
	NoPacking bool
}

// Defaults of Rules and of a packing port.
const (
	DefaultMaxAttempts = 5
	// PackWidth is how many groups a port on an engine that packs runs at once when its
	// concurrency is lower: the records of one SQS FIFO batch (at most 10) then share one
	// transaction.
	PackWidth = 10
)

// Validate reports what is wrong with r.
func (r Rules) Validate() error {
	if r.MaxAttempts < 0 {
		return fmt.Errorf("MaxAttempts is %d; want 1 or more (0 means %d)", r.MaxAttempts, DefaultMaxAttempts)
	}
	return nil
}
