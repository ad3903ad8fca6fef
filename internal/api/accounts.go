package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
	w, err := outbox.Write(h.cfg.Table, ev, now, outbox.WithTrace(xray.FromContext(ctx)))
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	accepted := respond(http.StatusAccepted, movementResponse{EventID: ev.ID, AccountID: accountID,
		Type: typ, Amount: *body.Amount, Reference: *body.Reference})
	return h.recordMovement(ctx, ev, *body.Reference, *body.Amount, w, accepted)
}

// accountResponse is the JSON of an account.
type accountResponse struct {
	ID      string         `json:"id"`
	Balance int64          `json:"balance"`
	Entries []ledger.Entry `json:"entries"`
}

func (h *Handler) getAccount(ctx context.Context, id string) (events.APIGatewayV2HTTPResponse, error) {
	if !idPattern.MatchString(id) {
		return respondField(badField("id", "must be 1 to 64 letters, digits, '-' or '_'")), nil
	}
	keyCond := expression.Key("pk").Equal(expression.Value(ledger.PK(id)))
	q, err := expression.NewBuilder().WithKeyCondition(keyCond).Build()
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("account query: %w", err)
	}
	resp := accountResponse{ID: id, Entries: []ledger.Entry{}}
	found := false
	pages := dynamodb.NewQueryPaginator(h.cfg.DB, &dynamodb.QueryInput{TableName: aws.String(h.cfg.Table),
		KeyConditionExpression: q.KeyCondition(), ExpressionAttributeNames: q.Names(),
		ExpressionAttributeValues: q.Values(), ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("query account %s: %w", id, err)
		}
		for _, item := range page.Items {
			found = true
			if err := decodeAccountItem(item, &resp); err != nil {
				return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("account %s: %w", id, err)
			}
		}
	}
	if !found {
		return respondError(http.StatusNotFound, "account "+id+" not found"), nil
	}
	return respond(http.StatusOK, resp), nil
}

func decodeAccountItem(item map[string]types.AttributeValue, resp *accountResponse) error {
	var kind struct {
		Kind string `dynamodbav:"kind"`
	}
	if err := attributevalue.UnmarshalMap(item, &kind); err != nil {
		return err
	}
	switch kind.Kind {
	case "account":
		var a ledger.Account
		if err := attributevalue.UnmarshalMap(item, &a); err != nil {
			return err
		}
		resp.Balance = a.Balance
	case "entry":
		var e ledger.Entry
		if err := attributevalue.UnmarshalMap(item, &e); err != nil {
			return err
		}
		resp.Entries = append(resp.Entries, e)
	default:
		return errors.New("unknown item kind " + kind.Kind)
	}
	return nil
}
