package sqsbatch

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/internal/denied"
)

// payload is the step in front of decoding: the body of msg, or, with Config.Payloads, the
// payload it points to. A failure is logged here; a permanent one is dead-lettered (after its
// group is held, under the consumer's policy) by the caller, any other retried. A denied read
// (the role may not read the object) is retried, never dead-lettered, and logged by the
// runner as a denial.
func (h decoding) payload(ctx context.Context, msg events.SQSMessage) (string, error) {
	if h.payloads == nil {
		return msg.Body, nil
	}
	readCtx, cancel := batch.EndBefore(ctx, h.answerMargin) // the batch must still answer in time
	defer cancel()
	body, err := h.payloads.Payload(readCtx, msg)
	if err != nil && denied.Is(err) {
		return "", err // the runner reports a denial, once
	}
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "message payload not read",
			slog.String("consumer", h.e.Name()), slog.String("messageId", msg.MessageId), slog.String("error", err.Error()))
		return "", err
	}
	return body, nil
}
