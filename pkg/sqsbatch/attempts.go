package sqsbatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"

	"github.com/onceflow/onceflow/pkg/idempotency"
)

// failureCounter counts a message's failed attempts: *idempotency.Consumer and
// *idempotency.LeasedConsumer implement it.
type failureCounter interface {
	CountMessageFailure(ctx context.Context, eventID, messageID string, cause error) (int, error)
	MessageFailures(ctx context.Context, eventID, messageID string) (int, string, error)
}

// groupHolder holds a message's group before it is dead-lettered, when its policy says so:
// *idempotency.Consumer implements it.
type groupHolder interface {
	HoldGroup(ctx context.Context, group, eventID, messageID string, reason error) error
	HoldsGroups() bool
}

// count counts a transient failure of the message's own processing and turns it permanent
// ("failed N times: <err>") when the message has failed MaxAttempts times (or more: its
// MaxAttempts-th failure could not be dead-lettered), so that the message is dead-lettered by
// the engine after MaxAttempts own failures. A redrive sends a new message, which gets
// MaxAttempts more. A held lease is not this message's failure: another delivery is
// processing the event. When the count cannot be written, err is returned as it is: the
// message is retried and the queue's maxReceiveCount stays the backstop.
func (h decoding) count(ctx context.Context, msg events.SQSMessage, eventID string, err error) error {
	counter, ok := h.a.(failureCounter)
	if !ok || idempotency.IsPermanent(err) || errors.Is(err, idempotency.ErrLeaseHeld) {
		return err
	}
	n, cerr := counter.CountMessageFailure(ctx, eventID, msg.MessageId, err)
	if cerr != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "failed attempt not counted",
			slog.String("consumer", h.a.Name()), slog.String("messageId", msg.MessageId),
			slog.String("eventId", eventID), slog.String("error", cerr.Error()))
		return err
	}
	if n < h.maxAttempts {
		return err
	}
	return idempotency.Permanent(fmt.Errorf("failed %d times: %w", n, err))
}

// exhausted returns the permanent error of a message that has failed MaxAttempts times
// already, and nil for any other. Only a message received more than MaxAttempts times can
// have (each own failure is one receive), so it costs a read on those receives only: a
// message whose MaxAttempts-th failure could not be dead-lettered (the hold or the send
// failed) goes to hold and dead-letter on its next delivery without running its handler
// again. When the count cannot be read the message is handled as usual.
func (h decoding) exhausted(ctx context.Context, msg events.SQSMessage, eventID string) error {
	counter, ok := h.a.(failureCounter)
	if received, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"]); !ok || received <= h.maxAttempts {
		return nil
	}
	n, last, err := counter.MessageFailures(ctx, eventID, msg.MessageId)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "failed attempts not read, message handled",
			slog.String("consumer", h.a.Name()), slog.String("messageId", msg.MessageId),
			slog.String("eventId", eventID), slog.String("error", err.Error()))
		return nil
	}
	if n < h.maxAttempts {
		return nil
	}
	return idempotency.Permanent(fmt.Errorf("failed %d times: %s", n, last))
}

// hold holds the message's group, under the consumer's HoldGroup policy, before a message
// that failed permanently is dead-lettered. A message refused because its group is held
// already holds nothing more. When the hold cannot be written the message is not
// dead-lettered yet: it fails, and is retried.
func (h decoding) hold(ctx context.Context, msg events.SQSMessage, eventID string, err error) error {
	holder, ok := h.a.(groupHolder)
	if !ok || !idempotency.IsPermanent(err) || errors.Is(err, idempotency.ErrHeld) {
		return err
	}
	if herr := holder.HoldGroup(ctx, msg.Attributes["MessageGroupId"], eventID, msg.MessageId, err); herr != nil {
		// %v, not %w: the message must not stay permanent, or it would be dead-lettered unheld.
		return fmt.Errorf("not dead-lettered yet, holding its group failed: %v; cause: %v", herr, err)
	}
	return err
}

// backstop holds the message's group naming it before it is handled, on its last
// BackstopReceives receives before the queue's MaxReceiveCount, under HoldGroup: should this
// receive crash or time out too, SQS moves the message to the dead-letter queue by itself,
// and its group must be held behind it as behind a message the engine dead-letters. The
// message's commit releases the hold when it succeeds. It reports whether it wrote (or tried
// to write) the hold. A hold that cannot be written is logged and the message handled as
// usual: it may succeed, and refusing it would move it unheld.
func (h decoding) backstop(ctx context.Context, msg events.SQSMessage, eventID string) bool {
	holder, ok := h.a.(groupHolder)
	group := msg.Attributes["MessageGroupId"]
	received, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	if !ok || h.maxReceiveCount == 0 || group == "" || received <= h.maxReceiveCount-BackstopReceives || !holder.HoldsGroups() {
		return false
	}
	reason := fmt.Errorf("received %d times of the queue's maxReceiveCount %d: held before it was handled, in case the queue moved it to its dead-letter queue by itself (a crash, a timeout, out of memory)",
		received, h.maxReceiveCount)
	if err := holder.HoldGroup(ctx, group, eventID, msg.MessageId, reason); err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "group not held before the message's last receives, message handled",
			slog.String("consumer", h.a.Name()), slog.String("messageId", msg.MessageId), slog.String("group", group),
			slog.String("eventId", eventID), slog.String("error", err.Error()))
	}
	return true
}

// recovered applies ev, turning a panic of the handler into an error (logged with its stack),
// so that it is counted as a failed attempt of this message like any other failure: a message
// that always panics is then dead-lettered after MaxAttempts, under its group's policy, rather
// than received until the queue's maxReceiveCount moves it and its untried group-mates.
func (h decoding) recovered(ctx context.Context, ev cloudevent.Event, d idempotency.Delivery) (res idempotency.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
			h.log.LogAttrs(ctx, slog.LevelError, "panic recovered",
				slog.String("consumer", h.a.Name()), slog.String("messageId", d.MessageID),
				slog.String("eventId", ev.ID), slog.String("reason", err.Error()), slog.String("stack", string(debug.Stack())))
		}
	}()
	return h.apply(ctx, ev, d)
}
