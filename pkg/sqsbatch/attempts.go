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

// backstop holds, before the batch runs and on the last BackstopReceives receives before the
// queue's MaxReceiveCount, under HoldGroup, the group of every message on them, naming it and
// every later message of its group in the batch, in batch order: should these receives crash
// or time out too, SQS moves the message to the dead-letter queue by itself, with its
// group-mates that rode along untried (and those the deadline guard never started), and the
// group must be held behind them in their order, as behind messages the engine dead-letters.
// It holds before any payload is read or decoded, so by the id each message was first sent as
// (Delivery.OriginID): a message whose payload is never read holds its group too. A message
// held already keeps its place. Each message's commit takes it off when it succeeds (or its
// duplicate does). It returns the indices of the messages it held (or tried to hold). A hold
// that cannot be written is logged and the messages handled as usual: they may succeed, and
// refusing them would move them unheld.
func (h decoding) backstop(ctx context.Context, recs []events.SQSMessage) map[int]bool {
	e := h.a.Engine()
	if h.maxReceiveCount == 0 || !e.HoldsGroups() {
		return nil
	}
	var order []string
	groups := map[string][]int{}
	for i, m := range recs {
		g := m.Attributes["MessageGroupId"]
		if g == "" {
			continue
		}
		received, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
		if _, on := groups[g]; !on && received <= h.maxReceiveCount-BackstopReceives {
			continue
		}
		if _, on := groups[g]; !on {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	held := map[int]bool{}
	for _, g := range order {
		list := make([]idempotency.Held, len(groups[g]))
		for n, i := range groups[g] {
			held[i] = true
			list[n].MessageID = Delivery(recs[i]).OriginID()
		}
		first := recs[groups[g][0]]
		list[0].Reason = fmt.Sprintf("received %s times of the queue's maxReceiveCount %d: held before it was handled, in case the queue moved it to its dead-letter queue by itself (a crash, a timeout, out of memory)",
			first.Attributes["ApproximateReceiveCount"], h.maxReceiveCount)
		err := e.HoldMessages(ctx, g, list)
		if denial, ok := idempotency.Denied(err); ok {
			idempotency.LogDenied(ctx, h.log, h.metrics, denial, "holding the group before its messages' last receives, messages handled",
				slog.String("consumer", e.Name()), slog.String("messageId", first.MessageId), slog.String("group", g),
				slog.Int("count", len(list)))
			continue
		}
		if err != nil {
			h.log.LogAttrs(ctx, slog.LevelError, "group not held before its messages' last receives, messages handled",
				slog.String("consumer", e.Name()), slog.String("messageId", first.MessageId), slog.String("group", g),
				slog.Int("count", len(list)), slog.String("error", err.Error()))
		}
	}
	return held
}
