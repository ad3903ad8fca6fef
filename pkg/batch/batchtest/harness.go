package batchtest

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/port"
)

// Harness is what a port's test implements for Run: how its source's records are made and
// delivered again, and how its handler is built and answers. R is the port's record (an
// events.SQSMessage, an events.KinesisEventRecord, ...). Run makes a new Harness for every
// case, and calls it from that case's goroutine only.
type Harness[R any] interface {
	// Records returns a new record for each message, in order, as the source hands them to
	// the function in one batch. The port's decoder must decode a message's Body as a
	// structured CloudEvent (the event's id its idempotency key) and refuse a Body that is not
	// one as malformed (a permanent error, as cloudevent.Decode's).
	Records(t *testing.T, msgs ...Message) []R
	// Port returns the port's handler applying events with e and dead-lettering to dl.
	Port(t *testing.T, e port.Engine, dl batch.DeadLetterer, opts Options) Handler[R]
	// Again is r as the source delivers it again after the function reported it failed (an
	// SQS message's next receive; a stream record, the same record).
	Again(r R) R
	// ID is the identifier the port's response names r by (an SQS message id, a stream
	// record's sequence number).
	ID(r R) string
	// Letter is r as the port hands it to the dead-letter sink (its MessageId is compared).
	Letter(r R) events.SQSMessage
	// Source says where the port's source differs by design.
	Source() Source
}

// Handler is a port's handler: it handles one batch and returns the identifiers its response
// reports failed (BatchItemFailures' ItemIdentifier), in the response's order.
type Handler[R any] func(ctx context.Context, recs []R) (failed []string)

// Message is a record to make: its ordered group (an SQS message group, a stream's partition
// key or item) and the body the port's decoder reads.
type Message struct {
	Group string
	Body  []byte
}

// Options are the port's settings a case asks for.
type Options struct {
	NoPacking bool // commit each event alone rather than the groups' next events together
}

// Source is what the port's source does that others do not.
type Source struct {
	// Checkpoints is true of a stream (Kinesis, DynamoDB Streams): the response reports only
	// the first record in batch order not done with, and the source delivers the batch again
	// from that record on, records done with included. False (SQS): the response reports
	// every record not done with, and the source delivers those again.
	Checkpoints bool
}
