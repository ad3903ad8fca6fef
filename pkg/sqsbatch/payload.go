package sqsbatch

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
)

// payload is the step in front of decoding: the body of msg, or, with Config.Payloads, the
// payload it points to. A failure is logged here; a permanent one is dead-lettered (after its
// group is held, under the consumer's policy) by the caller, any other retried.
func (h decoding) payload(ctx context.Context, msg events.SQSMessage) (string, error) {
	if h.payloads == nil {
		return msg.Body, nil
	}
	body, err := h.payloads.Payload(ctx, msg)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "message payload not read",
			slog.String("consumer", h.a.Name()), slog.String("messageId", msg.MessageId), slog.String("error", err.Error()))
		return "", err
	}
	return body, nil
}
