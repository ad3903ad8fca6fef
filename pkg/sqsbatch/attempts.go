package sqsbatch

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/idempotency"
)

// exhausted returns the permanent error of a message that has failed MaxAttempts times
// already, and nil for any other. Only a message received more than MaxAttempts times can
// have (each own failure is one receive), so it costs a read on those receives only: a
// message whose MaxAttempts-th failure could not be dead-lettered (the hold or the send
// failed) goes to hold and dead-letter on its next delivery without running its handler
// again. When the count cannot be read the message is handled as usual.
func (h decoding) exhausted(ctx context.Context, msg events.SQSMessage, eventID string) error {
	max := h.a.MaxAttempts()
	if received, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"]); received <= max {
		return nil
	}
	e := h.a.Engine()
	n, last, err := e.MessageFailures(ctx, eventID, msg.MessageId)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "failed attempts not read, message handled",
			slog.String("consumer", e.Name()), slog.String("messageId", msg.MessageId),
			slog.String("eventId", eventID), slog.String("error", err.Error()))
		return nil
	}
	if n < max {
		return nil
	}
	return idempotency.Permanent(fmt.Errorf("failed %d times: %s", n, last))
}

// backstop holds the message's group naming it before it is handled, on its last
// BackstopReceives receives before the queue's MaxReceiveCount, under HoldGroup: should this
// receive crash or time out too, SQS moves the message to the dead-letter queue by itself,
// and its group must be held behind it as behind a message the engine dead-letters. The
// message's commit releases the hold when it succeeds. It reports whether it wrote (or tried
// to write) the hold. A hold that cannot be written is logged and the message handled as
// usual: it may succeed, and refusing it would move it unheld.
func (h decoding) backstop(ctx context.Context, msg events.SQSMessage, eventID string) bool {
	e := h.a.Engine()
	group := msg.Attributes["MessageGroupId"]
	received, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	if h.maxReceiveCount == 0 || group == "" || received <= h.maxReceiveCount-BackstopReceives || !e.HoldsGroups() {
		return false
	}
	reason := fmt.Errorf("received %d times of the queue's maxReceiveCount %d: held before it was handled, in case the queue moved it to its dead-letter queue by itself (a crash, a timeout, out of memory)",
		received, h.maxReceiveCount)
	if err := e.HoldGroup(ctx, group, eventID, msg.MessageId, reason); err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "group not held before the message's last receives, message handled",
			slog.String("consumer", e.Name()), slog.String("messageId", msg.MessageId), slog.String("group", group),
			slog.String("eventId", eventID), slog.String("error", err.Error()))
	}
	return true
}
