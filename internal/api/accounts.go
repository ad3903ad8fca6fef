package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/xray"
)

// maxReferenceLength bounds a movement's reference.
const maxReferenceLength = 128

type movementRequest struct {
	Amount    *int64  `json:"amount"`
	Reference *string `json:"reference"`
}

// movementResponse is the JSON answer to an accepted credit or debit.
type movementResponse struct {
	EventID   string `json:"eventId"`
	AccountID string `json:"accountId"`
	Type      string `json:"type"`
	Amount    int64  `json:"amount"`
	Reference string `json:"reference"`
}

func (r movementRequest) validate() *fieldError {
	switch {
	case r.Amount == nil:
		return badField("amount", "required")
	case *r.Amount <= 0:
		return badField("amount", "must be a positive integer in minor units")
	case *r.Amount > ledger.MaxAmount:
		return badField("amount", "must be at most %d", ledger.MaxAmount)
	case r.Reference == nil || *r.Reference == "":
		return badField("reference", "required")
	case len(*r.Reference) > maxReferenceLength:
		return badField("reference", "longer than %d bytes", maxReferenceLength)
	}
	return sendable(map[string]string{"reference": *r.Reference})
}

// move records a credit or debit request as its movement item and its event in the outbox.
// The event id comes from the account and the reference, so a retry finds its own movement and
// is accepted again; the same reference with another movement is a 422 (see recordMovement).
func (h *Handler) move(ctx context.Context, req events.APIGatewayV2HTTPRequest, accountID, kind string) (events.APIGatewayV2HTTPResponse, error) {
	if !idPattern.MatchString(accountID) {
		return respondField(badField("id", "must be 1 to 64 letters, digits, '-' or '_'")), nil
	}
	var body movementRequest
	if fe := decodeBody(req, &body); fe != nil {
		return respondField(fe), nil
	}
	if fe := body.validate(); fe != nil {
		return respondField(fe), nil
	}
	typ := ledger.Credited
	if kind == "debits" {
		typ = ledger.Debited
	}
	now := h.cfg.Now()
	ev, err := ledger.NewEvent(typ, accountID, *body.Reference, *body.Amount, now)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	w, err := outbox.Put(h.cfg.Table, ev, now, outbox.WithTrace(xray.FromContext(ctx)))
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	accepted := respond(http.StatusAccepted, movementResponse{EventID: ev.ID, AccountID: accountID,
		Type: typ, Amount: *body.Amount, Reference: *body.Reference})
	return h.recordMovement(ctx, ev, *body.Reference, *body.Amount, w, accepted)
}

// accountResponse is the JSON of an account: one page of its entries, oldest first, and the
// cursor of the next page when there is one.
type accountResponse struct {
	ID         string         `json:"id"`
	Balance    int64          `json:"balance"`
	Entries    []ledger.Entry `json:"entries"`
	NextCursor string         `json:"nextCursor,omitempty"`
}

// getAccount answers the account's balance and one page of its entries: one GetItem and one
// Query of at most limit+1 items, whatever the account's history holds.
func (h *Handler) getAccount(ctx context.Context, req events.APIGatewayV2HTTPRequest, id string) (events.APIGatewayV2HTTPResponse, error) {
	if !idPattern.MatchString(id) {
		return respondField(badField("id", "must be 1 to 64 letters, digits, '-' or '_'")), nil
	}
	page, fe := parsePage(req)
	if fe != nil {
		return respondField(fe), nil
	}
	out, err := h.cfg.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(h.cfg.Table),
		Key: ledger.AccountKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("get account %s: %w", id, err)
	}
	if out.Item == nil {
		return respondError(http.StatusNotFound, "account "+id+" not found"), nil
	}
	var a ledger.Account
	if err := attributevalue.UnmarshalMap(out.Item, &a); err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("decode account %s: %w", id, err)
	}
	resp := accountResponse{ID: id, Balance: a.Balance}
	if resp.Entries, resp.NextCursor, err = h.entries(ctx, id, page); err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	return respond(http.StatusOK, resp), nil
}

// entries reads one page of account id's entries and the cursor of the next page, "" when
// this page is the last. It asks for one entry more than the page holds, so a page that ends
// exactly at the last entry has no cursor.
func (h *Handler) entries(ctx context.Context, id string, page entryPage) ([]ledger.Entry, string, error) {
	keyCond := expression.Key("pk").Equal(expression.Value(ledger.PK(id))).
		And(expression.Key("sk").BeginsWith(ledger.EntryPrefix))
	q, err := expression.NewBuilder().WithKeyCondition(keyCond).Build()
	if err != nil {
		return nil, "", fmt.Errorf("entries query: %w", err)
	}
	out, err := h.cfg.DB.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(h.cfg.Table),
		KeyConditionExpression: q.KeyCondition(), ExpressionAttributeNames: q.Names(),
		ExpressionAttributeValues: q.Values(), ConsistentRead: aws.Bool(true),
		Limit: aws.Int32(int32(page.limit + 1)), ExclusiveStartKey: page.startKey(id)})
	if err != nil {
		return nil, "", fmt.Errorf("query entries of %s: %w", id, err)
	}
	entries := []ledger.Entry{}
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &entries); err != nil {
		return nil, "", fmt.Errorf("decode entries of %s: %w", id, err)
	}
	more := out.LastEvaluatedKey != nil // also when DynamoDB stopped at 1 MB
	if len(entries) > page.limit {
		entries, more = entries[:page.limit], true
	}
	if !more || len(entries) == 0 {
		return entries, "", nil
	}
	return entries, cursor(entries[len(entries)-1].SK), nil
}
