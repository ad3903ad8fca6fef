package envelope

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// CloudEvents decodes a body that is a CloudEvents 1.0 JSON object (structured mode), as
// package publish and the outbox relay send it: the event's own id is its key, which the
// publisher must keep stable (it is also the FIFO MessageDeduplicationId). It is the default.
type CloudEvents struct{}

// Decode parses the message body with cloudevent.Decode.
func (CloudEvents) Decode(_ context.Context, msg events.SQSMessage) (cloudevent.Event, error) {
	return cloudevent.Decode([]byte(msg.Body))
}

// Func decodes a message any other way. Its event's ID must name the logical event (see the
// package comment); an error marked permanent (a cloudevent.MalformedError) dead-letters the
// message, any other error fails it so that it is received again.
type Func func(ctx context.Context, msg events.SQSMessage) (cloudevent.Event, error)

// Decode calls f.
func (f Func) Decode(ctx context.Context, msg events.SQSMessage) (cloudevent.Event, error) {
	return f(ctx, msg)
}

// group is the event's subject when the decoder's user named no group field: the message's
// FIFO group, or nothing on a standard queue.
func group(msg events.SQSMessage, picked string) string {
	if picked != "" {
		return picked
	}
	return msg.Attributes["MessageGroupId"]
}
