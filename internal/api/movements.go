package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/outbox"
)

// StatusHeld is the status of a pending movement whose account the ledger holds behind a
// dead-lettered movement (idempotency.HoldGroup): it waits, in order, until the blocker is
// applied or an operator decides.
const StatusHeld = "held"

// movementStatus is the JSON of GET /accounts/{id}/movements/{reference}.
type movementStatus struct {
	EventID    string      `json:"eventId"`
	Status     string      `json:"status"`               // pending, held, applied or rejected
	Reason     string      `json:"reason,omitempty"`     // why it was rejected
	At         string      `json:"at,omitempty"`         // the movement's time, once decided
	HeldBehind *heldBehind `json:"heldBehind,omitempty"` // with status held
}

// heldBehind is the dead-lettered movement a held one waits behind: its event id (the
// movement's own when it is the blocker; empty when the blocker had no usable id), why it was
// dead-lettered, and when the account was held.
type heldBehind struct {
	EventID string `json:"eventId,omitempty"`
	Reason  string `json:"reason"`
	HeldAt  string `json:"heldAt"`
}

// movementPath is where the status of the movement of reference on account is read.
func movementPath(accountID, reference string) string {
	return "/accounts/" + accountID + "/movements/" + url.PathEscape(reference)
}

// recordMovement writes the movement item of ev and its outbox event w in one transaction and
// answers accepted, with the Location of the movement's status. The movement item has no
// expiry: a reference used before, however long ago, is answered from it, accepted again for
// the same movement and 422 for another. Only a reference accepted before movement items
// existed is answered from its outbox item, while that lasts.
func (h *Handler) recordMovement(ctx context.Context, ev cloudevent.Event, reference string, amount int64,
	w types.TransactWriteItem, accepted events.APIGatewayV2HTTPResponse) (events.APIGatewayV2HTTPResponse, error) {
	accepted.Headers["Location"] = movementPath(ev.Subject, reference)
	mv, err := ledger.WriteMovement(h.cfg.Table, ev, reference, amount)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	_, err = h.cfg.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{mv, w}})
	if err == nil {
		return accepted, nil
	}
	var storedHash string
	if stored, ok := conditionFailedItem(err, 0); ok {
		var prev ledger.Movement
		if err := attributevalue.UnmarshalMap(stored, &prev); err != nil {
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("decode movement %s: %w", ev.ID, err)
		}
		storedHash = prev.PayloadHash
	} else if stored, ok := conditionFailedItem(err, 1); ok {
		var prev outbox.Item
		if err := attributevalue.UnmarshalMap(stored, &prev); err != nil {
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("decode outbox item %s: %w", ev.ID, err)
		}
		storedHash = prev.PayloadHash
	} else {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("record %s %s: %w", ev.Type, ev.ID, err)
	}
	if storedHash != ev.PayloadHash() {
		return respondField(&fieldError{status: http.StatusUnprocessableEntity, field: "reference",
			message: "already used for a different movement on this account"}), nil
	}
	return accepted, nil
}

// getMovement answers the status of the movement of reference on account id: pending until the
// ledger decides it, then applied or rejected (with the reason), for good.
func (h *Handler) getMovement(ctx context.Context, accountID, reference string) (events.APIGatewayV2HTTPResponse, error) {
	switch {
	case !idPattern.MatchString(accountID):
		return respondField(badField("id", "must be 1 to 64 letters, digits, '-' or '_'")), nil
	case len(reference) > maxReferenceLength:
		return respondField(badField("reference", "longer than %d bytes", maxReferenceLength)), nil
	}
	id := ledger.EventID(accountID, reference)
	out, err := h.cfg.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(h.cfg.Table),
		Key: ledger.MovementKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("get movement %s: %w", id, err)
	}
	if out.Item == nil {
		return respondError(http.StatusNotFound, "no movement with reference "+reference+" on account "+accountID), nil
	}
	var m ledger.Movement
	if err := attributevalue.UnmarshalMap(out.Item, &m); err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("decode movement %s: %w", id, err)
	}
	st := movementStatus{EventID: m.EventID, Status: m.Status, Reason: m.Reason}
	if m.Status != ledger.StatusPending {
		st.At = m.At
	} else {
		h.markHeld(ctx, accountID, &st)
	}
	return respond(http.StatusOK, st), nil
}

// markHeld turns a pending status into held when the ledger holds the account, with what it
// is held behind: one GetItem of the hold. A failed read leaves it pending (which it is) and is
// logged: the status is still true, only less precise.
func (h *Handler) markHeld(ctx context.Context, accountID string, st *movementStatus) {
	if h.cfg.Holds == nil {
		return
	}
	hold, ok, err := h.cfg.Holds.Hold(ctx, h.cfg.LedgerConsumer, accountID)
	if err != nil {
		h.cfg.Logger.WarnContext(ctx, "movement status: hold not read, answered pending", "account", accountID, "error", err)
		return
	}
	if !ok {
		return
	}
	st.Status = StatusHeld
	st.HeldBehind = &heldBehind{EventID: hold.BlockerEventID, Reason: hold.BlockerReason, HeldAt: hold.HeldAt}
}
