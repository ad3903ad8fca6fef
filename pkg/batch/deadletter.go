package batch

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
)

// DeadLetterer moves a message (or a stream record, shaped as one by its port) that can never
// succeed somewhere a person finds it, with the reason: *deadletter.Queue is one. It is called
// concurrently, for items of different groups. Every port takes this one interface.
type DeadLetterer interface {
	DeadLetter(ctx context.Context, msg events.SQSMessage, reason error) error
}

// DeadLettererFunc adapts a function to DeadLetterer.
type DeadLettererFunc func(ctx context.Context, msg events.SQSMessage, reason error) error

// DeadLetter calls f.
func (f DeadLettererFunc) DeadLetter(ctx context.Context, msg events.SQSMessage, reason error) error {
	return f(ctx, msg, reason)
}
