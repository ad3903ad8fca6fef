package batch

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
)

// Invoke is the Lambda handler (aws-lambda-go's lambda.Handler) of a function that consumes a
// stream and its replay queue: it tells the two event sources apart by the records'
// eventSource ("aws:sqs": the replay queue's; any other: the stream's) and runs payload, a
// Lambda event as JSON, through replay or stream, returning the response as JSON. An event that
// is not JSON is the invocation's error, as the runtime makes it for a handler of one type.
func Invoke[E, Resp any](ctx context.Context, payload []byte, stream func(context.Context, E) (Resp, error),
	replay func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)) ([]byte, error) {
	var probe struct {
		Records []struct {
			EventSource string `json:"eventSource"`
		}
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return nil, fmt.Errorf("decode the event: %w", err)
	}
	if len(probe.Records) > 0 && probe.Records[0].EventSource == "aws:sqs" {
		return run(ctx, payload, replay)
	}
	return run(ctx, payload, stream)
}

func run[E, Resp any](ctx context.Context, payload []byte, handle func(context.Context, E) (Resp, error)) ([]byte, error) {
	var ev E
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("decode the event: %w", err)
	}
	resp, err := handle(ctx, ev)
	if err != nil {
		return nil, err
	}
	return json.Marshal(resp)
}
