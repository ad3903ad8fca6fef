package metrics

import "time"

// Metric names the engine records.
const (
	Applied       = "Applied"       // an event's effect and record committed
	Duplicate     = "Duplicate"     // a record existed: nothing written
	Rejected      = "Rejected"      // an effect's own condition failed; the rejection recorded
	Conflict      = "Conflict"      // an event id reused with another payload
	Malformed     = "Malformed"     // a message that can never be processed as sent
	Failed        = "Failed"        // a transient failure, retried by redelivery
	Ignored       = "Ignored"       // an event routed nowhere, or of no effect: acknowledged, nothing written
	DeadLettered  = "DeadLettered"  // a message moved to a dead-letter queue
	LeaseTakeover = "LeaseTakeover" // a lease taken over after its owner's expired
	CommitLatency = "CommitLatency" // time spent in DynamoDB per message, in milliseconds
	Published     = "Published"     // an outbox event sent to a queue
	PublishFailed = "PublishFailed" // an outbox event that could not be sent
	Parked        = "Parked"        // an outbox event that can never be sent, parked for a person
	AccessDenied  = "AccessDenied"  // an AWS call refused for want of a permission: the deployment's fault
	Redecided     = "Redecided"     // an event decided again: an item its handler read changed before the commit
)

// Recorder receives the engine's metrics. Implementations must be safe for concurrent use.
type Recorder interface {
	// Count adds n to the counter name.
	Count(name string, n float64)
	// Observe records one duration under name.
	Observe(name string, d time.Duration)
}

// Flusher is implemented by a Recorder that buffers: the engine's batch handlers call Flush
// once at the end of every invocation.
type Flusher interface {
	Flush() error
}

// Discard records nothing. The engine uses it when no Recorder is configured.
var Discard Recorder = discard{}

type discard struct{}

func (discard) Count(string, float64)         {}
func (discard) Observe(string, time.Duration) {}

// Flush flushes r if it buffers, and does nothing otherwise.
func Flush(r Recorder) error {
	if f, ok := r.(Flusher); ok {
		return f.Flush()
	}
	return nil
}
