package api

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/ledger"
)

// Paging of an account's entries: GET /accounts/{id}?limit=N&cursor=C.
const (
	DefaultEntryLimit = 50  // entries per page when limit is absent
	MaxEntryLimit     = 100 // the largest limit accepted
)

// entryPage is the part of a GET /accounts/{id} request that selects a page of entries.
type entryPage struct {
	limit int
	after string // sort key of the last entry already seen; "" for the first page
}

// parsePage reads the limit and cursor query parameters.
func parsePage(req events.APIGatewayV2HTTPRequest) (entryPage, *fieldError) {
	p := entryPage{limit: DefaultEntryLimit}
	if s, ok := req.QueryStringParameters["limit"]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxEntryLimit {
			return p, badField("limit", "must be a whole number from 1 to %d", MaxEntryLimit)
		}
		p.limit = n
	}
	if c, ok := req.QueryStringParameters["cursor"]; ok {
		sk, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || !strings.HasPrefix(string(sk), ledger.EntryPrefix) {
			return p, badField("cursor", "is not a cursor this API returned")
		}
		p.after = string(sk)
	}
	return p, nil
}

// startKey is the Query's ExclusiveStartKey for the page of account id: nil on the first page.
func (p entryPage) startKey(id string) map[string]types.AttributeValue {
	if p.after == "" {
		return nil
	}
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: ledger.PK(id)},
		"sk": &types.AttributeValueMemberS{Value: p.after},
	}
}

// cursor is the opaque cursor that resumes after the entry whose sort key is sk.
func cursor(sk string) string { return base64.RawURLEncoding.EncodeToString([]byte(sk)) }
