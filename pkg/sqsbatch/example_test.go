package sqsbatch_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

func Example() {
	handler := sqsbatch.MessageHandlerFunc(func(ctx context.Context, msg events.SQSMessage) error {
		switch msg.Body {
		case "not json":
			return cloudevent.Malformed("body", "not a CloudEvents JSON object") // permanent
		case "throttled":
			return errors.New("throttled") // transient: SQS redelivers it
		}
		return nil
	})
	deadLetter := batch.DeadLettererFunc(func(ctx context.Context, msg events.SQSMessage, reason error) error {
		fmt.Printf("dead-lettered %s: %v\n", msg.MessageId, reason)
		return nil
	})
	p, err := sqsbatch.New(handler, sqsbatch.HandlerConfig{
		DeadLetter: deadLetter,
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	// In main: lambda.Start(p.Handle)
	msg := func(id, group, body string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, Body: body, EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:q.fifo",
			Attributes: map[string]string{"MessageGroupId": group}}
	}
	resp, _ := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("m1", "a", "not json"),
		msg("m2", "a", `{"ok":true}`),
		msg("m3", "b", "throttled"),
		msg("m4", "b", `{"ok":true}`),
	}})
	for _, f := range resp.BatchItemFailures {
		fmt.Println("failed:", f.ItemIdentifier)
	}
	// Output:
	// dead-lettered m1: malformed message: body: not a CloudEvents JSON object
	// failed: m3
	// failed: m4
}
