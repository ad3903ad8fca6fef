package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/internal/table"
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
	// queue), or discarded or skipped by an operator (package operator). Right for events
	// whose order matters (a balance's movements).
	HoldGroup
)

// HoldsGroups reports whether the consumer's policy is HoldGroup.
func (c *core) HoldsGroups() bool { return c.cfg.AfterDeadLetter == HoldGroup }

// HoldGroup holds group behind e, a message about to be dead-lettered for reason (e.MessageID
// the id it was first sent as, Delivery.OriginID; e.EventID and e.PayloadHash its event's, or
// empty when it could not be decoded), when the policy is HoldGroup. When the group is held
// already the message joins the end of its held list (once), so that it is applied after every
// message held before it. The hold goes once every message of its list has been applied,
// rejected, discarded or skipped (see package operator), in the list's order.
//
// An event its consumer has decided (its record applied, rejected or discarded with the same
// payload) holds nothing and is not to be dead-lettered: HoldGroup returns a *DecidedError
// (ErrDecided), having taken the message off the list if it was on it. The hold's write and
// that question are one transaction (a ConditionCheck of the record beside the hold's write),
// so a discard committing meanwhile is never undone; under GoOn, or without a group, it is a
// read of the record. A message is decided too when an operator discarded that very message (by
// the id it was first sent as: operator.Admin.Discard records it for a letter without an event
// id and for a conflict's, whose event's record is another payload's). A message an
// operator skipped is not held: a *SkippedError (ErrSkipped), its entries taken off the list
// (the backstop's, by its message id, of a re-send of the skipped event).
func (c *core) HoldGroup(ctx context.Context, group string, e holdlist.Held, reason error) error {
	if !c.HoldsGroups() || group == "" {
		var de *DecidedError
		if err := c.decidedByRead(ctx, e); errors.As(err, &de) {
			return c.answeredOnFailure(ctx, e, e.MessageID, de)
		} else if err != nil {
			return fmt.Errorf("read the record of %s: %w", e.EventID, err)
		}
		return nil
	}
	e.Reason, e.HeldAt = table.Truncate(reason.Error(), 1024), table.RFC3339(c.cfg.Now())
	var checks []types.TransactWriteItem
	if e.EventID != "" {
		check, err := c.undecidedCheck(e.EventID, e.PayloadHash)
		if err != nil {
			return err
		}
		checks = append(checks, *check)
	}
	if e.MessageID != "" { // an operator's discard of this very message (no event id, a conflict)
		check, err := c.undecidedMessageCheck(group, e.MessageID)
		if err != nil {
			return err
		}
		checks = append(checks, *check)
	}
	var skip *holdlist.Decision
	h, err := c.changeHold(ctx, group, c.absentHold(group), checks, func(h *holdlist.Hold) bool {
		if skip = holdlist.SkippedAs(*h, e); skip != nil {
			return holdlist.Remove(h, e) // listed by its message id before its event was known: it holds nothing
		}
		return holdlist.Add(h, e)
	})
	var de *DecidedError
	switch {
	case errors.As(err, &de):
		if err := c.leave(ctx, group, e, &h); err != nil {
			return fmt.Errorf("%s was decided already, but its group %s's hold not released: %w", e.EventID, group, err)
		}
		return c.answeredOnFailure(ctx, e, e.MessageID, de)
	case err != nil:
		return fmt.Errorf("hold group %s: %w", group, err)
	case skip != nil:
		return &SkippedError{Group: group, Skip: *skip}
	}
	return nil
}

// HoldMessages holds group, when the policy is HoldGroup, behind each message of held in
// order (a port's backstop: the messages of a group the transport may move by itself, in their
// order, by the id they were first sent as when their event id is not known yet): each joins
// the end of the list unless it is on it already, where it keeps its place, or an operator
// skipped it. One write, or a read and a write when the group is held already. It does nothing
// under GoOn, for an empty group or an empty list.
func (c *core) HoldMessages(ctx context.Context, group string, held []holdlist.Held) error {
	if !c.HoldsGroups() || group == "" || len(held) == 0 {
		return nil
	}
	now := table.RFC3339(c.cfg.Now())
	_, err := c.changeHold(ctx, group, c.absentHold(group), nil, func(h *holdlist.Hold) bool {
		changed := false
		for _, e := range held {
			e.Reason, e.HeldAt = table.Truncate(e.Reason, 1024), now
			changed = holdlist.Add(h, e) || changed
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
		Key:                                 table.ItemKey(table.HoldKey(c.cfg.Name, group)),
		ConditionExpression:                 aws.String("attribute_not_exists(pk) OR size(held) = :none"),
		ExpressionAttributeValues:           map[string]types.AttributeValue{":none": &types.AttributeValueMemberN{Value: "0"}},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

// passHold decides the commit of rec's event that its group's hold (old, its own item as the
// cancellation returned it, or nil) refused. The head of the held list gets the write to
// commit in its place: the hold without it, and without any other entry of its message
// (popWrite), deleted when nothing is left, conditional on the hold's version. Before that, for
// a hold over pages: when the head's event commits under another message id (a re-send), its
// pages are read and that message's entries on them taken off (one more write); when nothing
// else would be left in the hold's own item, the first page is moved into it (one more write,
// once a page). A message an operator skipped commits past the hold (pastHoldWrite), its own
// entries, if listed, taken off as the head's are. Any other event joins the end of the list,
// in one transaction with the check that it is not decided (a *DecidedError when it is), and
// gets a HeldError. A hold gone meanwhile gives back the plain check.
func (c *core) passHold(ctx context.Context, rec table.Record, old map[string]types.AttributeValue) (types.TransactWriteItem, error) {
	e := heldOf(rec)
	e.HeldAt = table.RFC3339(c.cfg.Now())
	if old == nil {
		var err error
		if old, err = c.readHold(ctx, rec.Group); err != nil {
			return types.TransactWriteItem{}, fmt.Errorf("group %s: %w", rec.Group, err)
		}
	}
	h, err := holdlist.Decode(old, c.cfg.Name, rec.Group)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("group %s: %w", rec.Group, err)
	}
	check, err := c.undecidedCheck(rec.EventID, rec.PayloadHash)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	// Retry.MaxAttempts changes of the hold meanwhile, and the three steps that may prepare the
	// head's commit (its pages read, its message's later entries taken off, a page moved in).
	for attempt := 1; attempt <= c.cfg.Retry.MaxAttempts+3; attempt++ {
		switch {
		case !holdlist.Holds(h):
			return c.releaseWrite(rec.Group), nil
		case !holdlist.Same(h.Held[0], e) && holdlist.SkippedAs(h, e) == nil: // joins the list, below
		case !holdlist.Loaded(h) && (!holdlist.Same(h.Held[0], e) || h.Held[0].MessageID != e.MessageID):
			// It commits past the hold (skipped) or in the head's place under another message
			// id (a producer's re-send): it may be listed by its own id on a page too. Read them,
			// so that its commit takes that entry off as well.
			if h, err = c.holdFrom(ctx, rec.Group, &h); err != nil {
				return types.TransactWriteItem{}, fmt.Errorf("group %s: %w", rec.Group, err)
			}
			continue
		case holdlist.ListedOnPage(h, e):
			if h, err = c.changeHold(ctx, rec.Group, &h, nil, func(h *holdlist.Hold) bool { return holdlist.RemoveLater(h, e) }); err != nil {
				return types.TransactWriteItem{}, fmt.Errorf("group %s: take %s's later entries off: %w", rec.Group, e, err)
			}
			continue
		case !holdlist.Same(h.Held[0], e):
			return c.pastHoldWrite(h, e)
		case holdlist.OwnAfter(h, e) == 0 && len(h.Pages) > 0:
			if h, err = c.changeHold(ctx, rec.Group, &h, nil, holdlist.PullPage); err != nil {
				return types.TransactWriteItem{}, fmt.Errorf("group %s: move its hold's first page: %w", rec.Group, err)
			}
			continue
		default:
			return c.popWrite(h, e)
		}
		var joined bool
		now, err := c.changeHold(ctx, rec.Group, &h, []types.TransactWriteItem{*check}, func(h *holdlist.Hold) bool {
			if joined = holdlist.Holds(*h) && !holdlist.Same(h.Held[0], e) && holdlist.SkippedAs(*h, e) == nil; !joined {
				return false // the head now, skipped, or not held: decided above
			}
			return holdlist.Add(h, e)
		})
		switch {
		case err != nil:
			return types.TransactWriteItem{}, fmt.Errorf("group %s: %w", rec.Group, err)
		case joined:
			return types.TransactWriteItem{}, heldError(now)
		}
		h = now
	}
	return types.TransactWriteItem{}, fmt.Errorf("group %s: its hold kept changing: %w", rec.Group, table.ErrChanged)
}

// popWrite is the write that takes the head of h's list off the hold, with the other entries
// of the hold's own item that surely are e's, the message that commits as the head (holdlist.Same:
// the head itself, or a re-send of its event, which the backstop may have listed by its own
// message id too). Which message heads it was decided in Go, on h as read: the write is
// conditional on h's version, so on that same head. h's own item keeps an entry of another
// message, or h has no pages (passHold moved the first page in): the write is of the hold's own
// item alone. Entries of e on pages are off already when e is a re-send (passHold read the
// pages); when e is the head's own message its pages are not read, and an entry of another
// message that learned the same event there is left to that message's own answer (it was
// dead-lettered: redriven, it is a duplicate, and core.leave takes it off).
func (c *core) popWrite(h holdlist.Hold, e holdlist.Held) (types.TransactWriteItem, error) {
	next := holdlist.Clone(h)
	holdlist.Pop(&next, nil)
	holdlist.RemoveSure(&next, e)
	w, err := holdlist.Writes(c.cfg.Table, h, next, holdlist.HeadCondition(h, h.Held[0].EventID), c.cfg.Now())
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	if len(w) != 1 {
		return types.TransactWriteItem{}, fmt.Errorf("hold of group %s: taking its head off is %d writes, want 1", h.Group, len(w))
	}
	return w[0], nil
}

// pastHoldWrite is the write a skipped message e commits with while its group is held behind
// others: a check that the hold is still h, which records its skip; or, when e is listed (by
// its message id, held by the backstop before it was decoded), the hold without its entries,
// conditional on h's version (passHold took its entries off h's pages).
func (c *core) pastHoldWrite(h holdlist.Hold, e holdlist.Held) (types.TransactWriteItem, error) {
	if next := holdlist.Clone(h); holdlist.Remove(&next, e) {
		w, err := holdlist.Writes(c.cfg.Table, h, next, holdlist.VersionCondition(h), c.cfg.Now())
		if err != nil {
			return types.TransactWriteItem{}, err
		}
		if len(w) != 1 {
			return types.TransactWriteItem{}, fmt.Errorf("hold of group %s: taking %s off is %d writes, want 1", h.Group, e, len(w))
		}
		return w[0], nil
	}
	expr, err := expression.NewBuilder().WithCondition(holdlist.VersionCondition(h)).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("build hold condition: %w", err)
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(c.cfg.Table), Key: table.ItemKey(h.Key),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}, nil
}

// releasedAfter returns what takes rec's event off its group's hold when the event turned out
// a duplicate (a last attempt that committed though its answer was lost, a discarded event)
// while it is on the held list (put there by the backstop before it was decoded): the commit
// that would have done so was cancelled, and an event decided already holds nothing. The
// commit's check of the hold says whether the group is held: not held, nothing more; held,
// its item came back with the cancellation, and a write is made only when the event is on the
// list (its pages read first, when it has some). A failed release fails the message, so that a
// delivery again retries it.
func (c *core) releasedAfter(ctx context.Context, rec table.Record, v verdict) func(Result, error) (Result, error) {
	return func(res Result, err error) (Result, error) {
		if err != nil || res.Outcome != Duplicate || !c.HoldsGroups() || rec.Group == "" || v.holdFree {
			return res, err
		}
		var start *holdlist.Hold
		if v.holdHeld {
			h, err := holdlist.Decode(v.hold, c.cfg.Name, rec.Group)
			if err != nil {
				res.Outcome = Failed
				return res, err
			}
			start = &h
		}
		if err := c.leave(ctx, rec.Group, heldOf(rec), start); err != nil {
			res.Outcome = Failed
			return res, fmt.Errorf("release group %s held behind %s: %w", rec.Group, rec.EventID, err)
		}
		return res, nil
	}
}

// heldError builds the error for a commit refused by its group's hold h.
func heldError(h holdlist.Hold) *HeldError {
	return &HeldError{Group: h.Group, BlockerEventID: h.BlockerEventID, BlockerMessage: h.BlockerMessage, BlockerReason: h.BlockerReason}
}
