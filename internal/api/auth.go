package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// Scopes a token's scope claim grants, one per right.
const (
	ScopeNotesWrite  = "notes.write"
	ScopeNotesRead   = "notes.read"
	ScopeLedgerWrite = "ledger.write"
	ScopeLedgerRead  = "ledger.read"
)

// Principal is who a request comes from, as the API Gateway JWT authorizer verified it: the
// token's subject and the scopes it grants.
type Principal struct {
	Subject string
	Scopes  []string
}

// Has reports whether p was granted scope.
func (p Principal) Has(scope string) bool { return slices.Contains(p.Scopes, scope) }

// withPrefix returns p with only the scopes that carry prefix, without it; p itself when
// prefix is "".
func (p Principal) withPrefix(prefix string) Principal {
	if prefix == "" {
		return p
	}
	out := Principal{Subject: p.Subject}
	for _, s := range p.Scopes {
		if rest, ok := strings.CutPrefix(s, prefix); ok {
			out.Scopes = append(out.Scopes, rest)
		}
	}
	return out
}

// allow decides whether a principal may call a route; params are the route's path
// parameters by name.
type allow func(p Principal, params map[string]string) bool

// scope allows principals granted s.
func scope(s string) allow {
	return func(p Principal, _ map[string]string) bool { return p.Has(s) }
}

// ownerOr allows the owner of the resource named by the path parameter param (the token's
// subject equals it), and principals granted s.
func ownerOr(param, s string) allow {
	return func(p Principal, params map[string]string) bool {
		return (p.Subject != "" && p.Subject == params[param]) || p.Has(s)
	}
}

// accessRule is one route of the API and who may call it.
type accessRule struct {
	method, path string // path with {param} segments, as the template's HttpApi events
	allow        allow
	need         string // what a refusal says is missing
}

// rules is the API's access table: a route with no rule here is answered 404, whatever the
// handler knows, so a new route is closed until it is given one.
var rules = []accessRule{
	{http.MethodPost, "/notes", scope(ScopeNotesWrite), "scope " + ScopeNotesWrite},
	{http.MethodGet, "/notes/{id}", scope(ScopeNotesRead), "scope " + ScopeNotesRead},
	{http.MethodGet, "/tags/{tag}", scope(ScopeNotesRead), "scope " + ScopeNotesRead},
	{http.MethodPost, "/accounts/{id}/credits", scope(ScopeLedgerWrite), "scope " + ScopeLedgerWrite},
	{http.MethodPost, "/accounts/{id}/debits", scope(ScopeLedgerWrite), "scope " + ScopeLedgerWrite},
	{http.MethodGet, "/accounts/{id}", ownerOr("id", ScopeLedgerRead), "the account's owner or scope " + ScopeLedgerRead},
	{http.MethodGet, "/accounts/{id}/movements/{reference}", ownerOr("id", ScopeLedgerRead), "the account's owner or scope " + ScopeLedgerRead},
}

// match reports whether the rule covers method and segs, with the path parameters it binds.
func (r accessRule) match(method string, segs []string) (map[string]string, bool) {
	want := strings.Split(strings.Trim(r.path, "/"), "/")
	if method != r.method || len(want) != len(segs) {
		return nil, false
	}
	params := map[string]string{}
	for i, w := range want {
		switch {
		case strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}"):
			params[w[1:len(w)-1]] = segs[i]
		case w != segs[i]:
			return nil, false
		}
	}
	return params, true
}

// PrincipalOf returns the principal of a request from the claims the API Gateway JWT
// authorizer put in requestContext.authorizer.jwt, never from the request's own headers or
// body; ok is false when the request carries no verified claims. Scopes come from the
// authorizer's scopes and the token's space-separated scope claim.
func PrincipalOf(req events.APIGatewayV2HTTPRequest) (Principal, bool) {
	a := req.RequestContext.Authorizer
	if a == nil || a.JWT == nil || len(a.JWT.Claims) == 0 {
		return Principal{}, false
	}
	p := Principal{Subject: a.JWT.Claims["sub"]}
	for _, s := range append(slices.Clone(a.JWT.Scopes), strings.Fields(a.JWT.Claims["scope"])...) {
		if !p.Has(s) {
			p.Scopes = append(p.Scopes, s)
		}
	}
	return p, true
}

// authorize decides a request before its handler runs: 404 for a route without a rule,
// 401 without verified claims, 403 when the rule refuses the principal.
func authorize(req events.APIGatewayV2HTTPRequest, method string, segs []string, scopePrefix string) (events.APIGatewayV2HTTPResponse, bool) {
	for _, r := range rules {
		params, ok := r.match(method, segs)
		if !ok {
			continue
		}
		p, ok := PrincipalOf(req)
		if !ok {
			resp := respondError(http.StatusUnauthorized, "a valid bearer token is required")
			resp.Headers["WWW-Authenticate"] = "Bearer"
			return resp, false
		}
		if !r.allow(p.withPrefix(scopePrefix), params) {
			return respondError(http.StatusForbidden, "forbidden: this route needs "+r.need), false
		}
		return events.APIGatewayV2HTTPResponse{}, true
	}
	return respondError(http.StatusNotFound, "no such route"), false
}

// Routes lists the routes the access rules cover, as "METHOD /path" route keys.
func Routes() []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.method + " " + r.path
	}
	return out
}
