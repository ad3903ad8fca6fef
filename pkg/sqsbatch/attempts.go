package sqsbatch

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
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
	if denial, ok := idempotency.Denied(err); ok {
		idempotency.LogDenied(ctx, h.log, h.metrics, denial, "reading the failed attempts, message handled",
			slog.String("consumer", e.Name()), slog.String("messageId", msg.MessageId), slog.String("eventId", eventID))
		return nil
	}
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

// backstop is batch.Backstop of the batch's messages, by their MessageGroupId and the id each
// was first sent as (Delivery.OriginID): it holds before any payload is read or decoded, so a
// message whose payload is never read holds its group too.
func (h decoding) backstop(ctx context.Context, recs []events.SQSMessage) map[int]bool {
	msgs := make([]batch.Queued, len(recs))
	for i, m := range recs {
		d := Delivery(m)
		msgs[i] = batch.Queued{MessageID: m.MessageId, Group: d.Group, OriginID: d.OriginID(), ReceiveCount: d.ReceiveCount}
	}
	return batch.Backstop(ctx, h.a.Engine(), h.maxReceiveCount, msgs)
}
