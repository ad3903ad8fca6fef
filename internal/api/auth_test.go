package api_test

import (
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/internal/api"
	"github.com/onceflow/onceflow/internal/apptest"
)

// at returns a sample request sent to method path instead.
func at(req events.APIGatewayV2HTTPRequest, method, path string) events.APIGatewayV2HTTPRequest {
	req.RawPath, req.RequestContext.HTTP.Path, req.RequestContext.HTTP.Method = path, path, method
	return req
}

type caller struct {
	anonymous bool
	sub       string
	scopes    []string
}

var (
	nobody = caller{anonymous: true}
	owner  = caller{sub: "acc-1001"}
)

func as(sub string, scopes ...string) caller { return caller{sub: sub, scopes: scopes} }

func (c caller) on(req events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPRequest {
	if c.anonymous {
		return apptest.Anonymous(req)
	}
	return apptest.Authorized(req, c.sub, c.scopes...)
}

func TestAPI_access_rules_answer_401_403_or_serve_the_route(t *testing.T) {
	f := newFixture(t)
	note := sample(t, "api-create-note.json")
	credit := sample(t, "api-credit.json")
	debit := sample(t, "api-debit.json")
	get := sample(t, "api-get-note.json")
	tests := []struct {
		name   string
		req    events.APIGatewayV2HTTPRequest
		who    caller
		status int
	}{
		{"create note without a token", note, nobody, http.StatusUnauthorized},
		{"create note with notes.read only", note, as("alice", api.ScopeNotesRead, api.ScopeLedgerWrite), http.StatusForbidden},
		{"create note with notes.write", note, as("alice", api.ScopeNotesWrite), http.StatusCreated},
		{"get note without a token", get, nobody, http.StatusUnauthorized},
		{"get note with notes.write only", get, as("alice", api.ScopeNotesWrite), http.StatusForbidden},
		{"get note with notes.read", get, as("alice", api.ScopeNotesRead), http.StatusNotFound},
		{"get tag without a token", at(get, "GET", "/tags/go"), nobody, http.StatusUnauthorized},
		{"get tag with ledger.read only", at(get, "GET", "/tags/go"), as("alice", api.ScopeLedgerRead), http.StatusForbidden},
		{"get tag with notes.read", at(get, "GET", "/tags/go"), as("alice", api.ScopeNotesRead), http.StatusOK},
		{"credit without a token", credit, nobody, http.StatusUnauthorized},
		{"credit by the owner without ledger.write", credit, as("acc-1001", api.ScopeLedgerRead, api.ScopeNotesWrite), http.StatusForbidden},
		{"credit with ledger.write", credit, as("svc", api.ScopeLedgerWrite), http.StatusAccepted},
		{"debit without a token", debit, nobody, http.StatusUnauthorized},
		{"debit with ledger.read only", debit, as("svc", api.ScopeLedgerRead), http.StatusForbidden},
		{"debit with ledger.write", debit, as("svc", api.ScopeLedgerWrite), http.StatusAccepted},
		{"get account without a token", at(get, "GET", "/accounts/acc-1001"), nobody, http.StatusUnauthorized},
		{"get account of another subject", at(get, "GET", "/accounts/acc-1001"), as("acc-2002", api.ScopeLedgerWrite, api.ScopeNotesRead), http.StatusForbidden},
		{"get account by its owner, no scope", at(get, "GET", "/accounts/acc-1001"), owner, http.StatusNotFound},
		{"get account with ledger.read", at(get, "GET", "/accounts/acc-1001"), as("auditor", api.ScopeLedgerRead), http.StatusNotFound},
		{"get movement without a token", at(get, "GET", "/accounts/acc-1001/movements/ref-1"), nobody, http.StatusUnauthorized},
		{"get movement of another subject", at(get, "GET", "/accounts/acc-1001/movements/ref-1"), as("acc-2002", api.ScopeLedgerWrite), http.StatusForbidden},
		{"unknown route without a token", sample(t, "api-unknown-route.json"), nobody, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.do(t, tt.who.on(tt.req))
			if status != tt.status {
				t.Fatalf("got %d %v; want %d", status, body, tt.status)
			}
			if msg, _ := body["error"].(string); status >= 400 && msg == "" {
				t.Fatalf("error body %v has no \"error\" message", body)
			}
		})
	}
}

func TestAPI_movement_route_follows_the_account_rule_once_served(t *testing.T) {
	f := newFixture(t)
	req := at(sample(t, "api-get-note.json"), "GET", "/accounts/acc-1001/movements/ref-1")
	for _, who := range []caller{owner, as("auditor", api.ScopeLedgerRead)} {
		if status, body := f.do(t, who.on(req)); status == http.StatusUnauthorized || status == http.StatusForbidden {
			t.Errorf("%+v: got %d %v; want the route's own answer", who, status, body)
		}
	}
}

func TestAPI_a_bearer_header_without_verified_claims_is_401(t *testing.T) {
	f := newFixture(t)
	req := apptest.Anonymous(sample(t, "api-credit.json"))
	req.Headers["authorization"] = "Bearer not-checked-by-the-function"
	req.Headers["x-sub"] = "acc-1001"
	status, body := f.do(t, req)
	if status != http.StatusUnauthorized {
		t.Fatalf("got %d %v; want 401: the function trusts only the authorizer's claims", status, body)
	}
	if got := f.kinds(t); len(got) != 0 {
		t.Fatalf("a refused request wrote %v", got)
	}
}

func TestAPI_claims_in_the_body_grant_nothing(t *testing.T) {
	f := newFixture(t)
	req := apptest.Authorized(sample(t, "api-credit.json"), "acc-1001")
	req.Body = `{"amount":100,"reference":"r","sub":"acc-1001","scope":"ledger.write"}`
	if status, body := f.do(t, req); status != http.StatusForbidden {
		t.Fatalf("got %d %v; want 403", status, body)
	}
}

func TestAPI_scopes_come_from_the_scope_claim_or_the_authorizer_list(t *testing.T) {
	req := apptest.Authorized(sample(t, "api-credit.json"), "svc", api.ScopeLedgerWrite)
	req.RequestContext.Authorizer.JWT.Scopes = nil
	if p, ok := api.PrincipalOf(req); !ok || !p.Has(api.ScopeLedgerWrite) || p.Subject != "svc" {
		t.Fatalf("from the scope claim: %+v %v", p, ok)
	}
	delete(req.RequestContext.Authorizer.JWT.Claims, "scope")
	req.RequestContext.Authorizer.JWT.Scopes = []string{api.ScopeLedgerRead}
	if p, ok := api.PrincipalOf(req); !ok || !p.Has(api.ScopeLedgerRead) || p.Has(api.ScopeLedgerWrite) {
		t.Fatalf("from the authorizer's scopes: %+v %v", p, ok)
	}
}

func TestAPI_with_a_scope_prefix_only_prefixed_scopes_count(t *testing.T) {
	f := newFixture(t)
	h, err := api.New(api.Config{DB: f.db, Table: f.table, ScopePrefix: "https://api.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	credit := sample(t, "api-credit.json")
	tests := []struct {
		name   string
		scopes []string
		status int
	}{
		{"bare scope", []string{api.ScopeLedgerWrite}, http.StatusForbidden},
		{"another resource server", []string{"https://other.example.com/" + api.ScopeLedgerWrite}, http.StatusForbidden},
		{"this resource server", []string{"https://api.example.com/" + api.ScopeLedgerWrite}, http.StatusAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, body := f.do(t, apptest.Authorized(credit, "svc", tt.scopes...)); status != tt.status {
				t.Fatalf("got %d %v; want %d", status, body, tt.status)
			}
		})
	}
}
