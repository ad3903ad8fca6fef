package idempotency

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// GroupPolicy says what a Consumer does with the later events of a group (an SQS FIFO message
// group, Delivery.Group) after one of the group's messages was dead-lettered.
type GroupPolicy uint8

const (
	// GoOn applies the later events of the group as they come: the dead-lettered one is
	// applied, if ever, out of order when it is redriven. The default. Right for events
	// whose effects commute (a note's tags).
	GoOn GroupPolicy = iota
	// HoldGroup keeps the group's order through a dead letter: the dead-lettered message
	// holds its group, every later message of the group fails permanently with a HeldError
	// naming the head of the hold and is dead-lettered after it, in order, and the messages
	// of the hold's list are applied only in their order (a redrive of the dead-letter
	// queue), or discarded or skipped by an operator (Admin). Right for events whose order
	// matters (a balance's movements).
	HoldGroup
)

// ErrHeld is matched by a HeldError.
var ErrHeld = errors.New("group held behind a dead-lettered message")

// HeldError reports an event not applied because its group is held (HoldGroup) behind an
// earlier message that was dead-lettered. It is permanent: the message is dead-lettered after
// the one it is held behind, so that a redrive replays the group in order.
type HeldError struct {
	Group          string
	BlockerEventID string // empty when the blocking message had no usable event id
	BlockerMessage string // the SQS message id of the blocking message
	BlockerReason  string // why the blocking message was dead-lettered
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("group %s held behind event %q (message %s), dead-lettered because: %s; redrive the dead-letter queue in order once the cause is fixed",
		e.Group, e.BlockerEventID, e.BlockerMessage, e.BlockerReason)
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Permanent reports that retrying cannot help until the group is released.
func (e *HeldError) Permanent() bool { return true }

// holdKey is the key of a group's hold item. It starts with the key separator, which no
// consumer name contains, so it never collides with a record's key.
func holdKey(consumer, group string) string {
	return keySeparator + "hold" + keySeparator + consumer + keySeparator + group
}

// HoldsGroups reports whether the consumer's policy is HoldGroup.
func (c *core) HoldsGroups() bool { return c.cfg.AfterDeadLetter == HoldGroup }

// HoldGroup holds group behind the message (event eventID, possibly empty; messageID the id it
// was first sent as, Delivery.OriginID) about to be dead-lettered for reason, when the policy is HoldGroup; it does
// nothing under GoOn or for an empty group. When the group is held already the message joins
// the end of its held list (once), so that it is applied after every message held before it.
// The hold goes once every message of its list has been applied, rejected, discarded or
// skipped (see Admin), in the list's order. An event an operator discarded (Admin.Discard)
// holds nothing: it was decided, and is not to be applied.
func (c *core) HoldGroup(ctx context.Context, group, eventID, messageID string, reason error) error {
	if !c.HoldsGroups() || group == "" {
		return nil
	}
	if eventID != "" {
		if _, ok, err := c.discarded(ctx, eventID); err != nil || ok {
			return err
		}
	}
	e := Held{EventID: eventID, MessageID: messageID, Reason: truncate(reason.Error(), 1024), HeldAt: rfc3339(c.cfg.Now())}
	// First as if the group were not held (a Put if absent): a hold there already is read then.
	_, err := c.changeHold(ctx, group, nil, true, func(h *Hold) bool { return h.add(e) })
	if err != nil {
		return fmt.Errorf("hold group %s: %w", group, err)
	}
	return nil
}

// HoldMessages holds group, when the policy is HoldGroup, behind each message of held in
// order (a port's backstop: the messages of a group the transport may move by itself, in their
// order, by the id they were first sent as when their event id is not known yet): each joins
// the end of the list unless it is on it already, where it keeps its place. One write, or a
// read and a write when the group is held already. It does nothing under GoOn, for an empty
// group or an empty list.
func (c *core) HoldMessages(ctx context.Context, group string, held []Held) error {
	if !c.HoldsGroups() || group == "" || len(held) == 0 {
		return nil
	}
	now := rfc3339(c.cfg.Now())
	_, err := c.changeHold(ctx, group, nil, true, func(h *Hold) bool {
		changed := false
		for _, e := range held {
			e.Reason, e.HeldAt = truncate(e.Reason, 1024), now
			changed = h.add(e) || changed
		}
		return changed
	})
	if err != nil {
		return fmt.Errorf("hold group %s: %w", group, err)
	}
	return nil
}

// releaseWrite is the write a commit of an event of group adds under HoldGroup: a check that
// the group is not held (no hold, or one that only keeps an operator's skips). One more item
// in the transaction, no round trip; a commit it cancels is decided by passHold.
func (c *core) releaseWrite(group string) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                           aws.String(c.cfg.Table),
		Key:                                 Record{Key: holdKey(c.cfg.Name, group)}.key(),
		ConditionExpression:                 aws.String("attribute_not_exists(pk) OR size(held) = :none"),
		ExpressionAttributeValues:           map[string]types.AttributeValue{":none": &types.AttributeValueMemberN{Value: "0"}},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

// passHold decides the commit of rec's event that its group's hold (old, the item as the
// cancellation returned it, or nil) refused. The head of the held list gets the write to
// commit in its place: the hold without it (deleted when nothing is left), conditional on
// the hold's version. Any other event joins the end of the list and gets a HeldError. A hold
// gone meanwhile gives back the plain check.
func (c *core) passHold(ctx context.Context, rec Record, old map[string]types.AttributeValue) (types.TransactWriteItem, error) {
	var head bool
	h, err := c.changeHold(ctx, rec.Group, old, old != nil, func(h *Hold) bool {
		if head = h.held() && h.Held[0].same(rec.held()); head || !h.held() {
			return false
		}
		e := rec.held()
		e.HeldAt = rfc3339(c.cfg.Now())
		return h.add(e)
	})
	switch {
	case err != nil:
		return types.TransactWriteItem{}, fmt.Errorf("group %s: %w", rec.Group, err)
	case head:
		return c.popWrite(h)
	case !h.held():
		return c.releaseWrite(rec.Group), nil
	}
	return types.TransactWriteItem{}, heldError(h)
}

// popWrite is the write that removes the head of h's list from the hold. Which message heads
// it was decided in Go, on h as read (by event id or first message id, Held.same): the write
// is conditional on h's version, so on that same head.
func (c *core) popWrite(h Hold) (types.TransactWriteItem, error) {
	next := h
	next.Held = append([]Held(nil), h.Held...)
	next.pop(nil)
	return holdWrite(c.cfg.Table, h, next, headCondition(h, h.Held[0].EventID))
}

// releasedAfter returns what takes rec's event off its group's hold when the event turned out
// a duplicate (a last attempt that committed though its answer was lost, a discarded event)
// while it is on the held list (at its head, or put after another by the backstop though it
// was applied before): the commit that would have done so was cancelled, and an event decided
// already holds nothing. Under HoldGroup only, for a duplicate found by DynamoDB only, it costs
// a read of the hold, and a write when the event is on it. A failed release fails the message, so that a delivery again
// retries it.
func (c *core) releasedAfter(ctx context.Context, rec Record) func(Result, error) (Result, error) {
	return func(res Result, err error) (Result, error) {
		if err != nil || res.Outcome != Duplicate || !c.HoldsGroups() || rec.Group == "" {
			return res, err
		}
		if _, err := c.changeHold(ctx, rec.Group, nil, false, func(h *Hold) bool {
			return h.held() && h.remove(rec.held(), nil) // decided: off the list wherever it is
		}); err != nil {
			res.Outcome = Failed
			return res, fmt.Errorf("release group %s held behind %s: %w", rec.Group, rec.EventID, err)
		}
		return res, nil
	}
}

// heldError builds the error for a commit refused by its group's hold h.
func heldError(h Hold) *HeldError {
	return &HeldError{Group: h.Group, BlockerEventID: h.BlockerEventID, BlockerMessage: h.BlockerMessage, BlockerReason: h.BlockerReason}
}

// truncate cuts s to at most n bytes at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
