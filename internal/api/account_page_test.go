package api_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/internal/api"
	"github.com/onceflow/onceflow/internal/ledger"
)

// credits applies n credits of 1..n to account acc-1001, one second apart.
func credits(t *testing.T, f *fixture, n int) {
	t.Helper()
	for i := range n {
		ev, err := ledger.NewEvent(ledger.Credited, "acc-1001", fmt.Sprint("ref-", i), int64(i+1), now.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		apply(t, f, ev)
	}
}

func getAccount(t *testing.T, query map[string]string) events.APIGatewayV2HTTPRequest {
	req := sample(t, "api-get-account.json")
	req.QueryStringParameters = query
	return req
}

func TestAPI_get_account_pages_its_entries_with_an_opaque_cursor(t *testing.T) {
	f := newFixture(t)
	credits(t, f, 5)
	var amounts []float64
	var pages []int
	query := map[string]string{"limit": "2"}
	for range 10 {
		status, body := f.do(t, getAccount(t, query))
		if status != http.StatusOK || body["id"] != "acc-1001" || body["balance"] != 15.0 {
			t.Fatalf("page %d = %d %v; want 200 with id and balance 15", len(pages), status, body)
		}
		entries, _ := body["entries"].([]any)
		pages = append(pages, len(entries))
		for _, e := range entries {
			amounts = append(amounts, e.(map[string]any)["amount"].(float64))
		}
		next, ok := body["nextCursor"].(string)
		if !ok {
			break
		}
		query = map[string]string{"limit": "2", "cursor": next}
	}
	if fmt.Sprint(pages) != "[2 2 1]" || fmt.Sprint(amounts) != "[1 2 3 4 5]" {
		t.Fatalf("pages of %v entries with amounts %v; want [2 2 1] and [1 2 3 4 5] in time order", pages, amounts)
	}
}

func TestAPI_get_account_limit_defaults_and_a_full_last_page_has_no_cursor(t *testing.T) {
	f := newFixture(t)
	credits(t, f, api.DefaultEntryLimit+1)
	tests := []struct {
		name       string
		query      map[string]string
		wantLen    int
		wantCursor bool
	}{
		{"no limit gives the default", nil, api.DefaultEntryLimit, true},
		{"the maximum limit gives every entry", map[string]string{"limit": strconv.Itoa(api.MaxEntryLimit)}, api.DefaultEntryLimit + 1, false},
		{"a limit of exactly the count gives every entry and no cursor", map[string]string{"limit": strconv.Itoa(api.DefaultEntryLimit + 1)}, api.DefaultEntryLimit + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.do(t, getAccount(t, tt.query))
			entries, _ := body["entries"].([]any)
			_, hasCursor := body["nextCursor"]
			if status != http.StatusOK || len(entries) != tt.wantLen || hasCursor != tt.wantCursor {
				t.Fatalf("got %d with %d entries, cursor %v; want %d entries, cursor %v", status, len(entries), hasCursor, tt.wantLen, tt.wantCursor)
			}
		})
	}
}

func TestAPI_get_account_bad_limit_or_cursor_is_400_naming_it(t *testing.T) {
	f := newFixture(t)
	credits(t, f, 1)
	tests := []struct {
		name  string
		query map[string]string
		field string
	}{
		{"zero limit", map[string]string{"limit": "0"}, "limit"},
		{"limit above the maximum", map[string]string{"limit": strconv.Itoa(api.MaxEntryLimit + 1)}, "limit"},
		{"limit not a number", map[string]string{"limit": "ten"}, "limit"},
		{"cursor not base64", map[string]string{"cursor": "%%%"}, "cursor"},
		{"cursor of no entry", map[string]string{"cursor": "QUNDT1VOVA"}, "cursor"}, // "ACCOUNT"
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.do(t, getAccount(t, tt.query))
			if status != http.StatusBadRequest || body["field"] != tt.field {
				t.Fatalf("got %d %v; want 400 naming %s", status, body, tt.field)
			}
		})
	}
}
