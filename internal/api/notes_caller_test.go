package api_test

import (
	"maps"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// signedInAs returns req sent with a token of subject sub.
func signedInAs(req events.APIGatewayV2HTTPRequest, sub string) events.APIGatewayV2HTTPRequest {
	jwt := *req.RequestContext.Authorizer.JWT
	jwt.Claims = maps.Clone(jwt.Claims)
	jwt.Claims["sub"] = sub
	auth := *req.RequestContext.Authorizer
	auth.JWT = &jwt
	req.RequestContext.Authorizer = &auth
	return req
}

// An Idempotency-Key belongs to its caller (the token's sub): another caller reusing it gets a
// note of its own, even with another body, and each caller's retry gets its own note back.
func TestAPI_an_Idempotency_Key_is_scoped_to_the_caller(t *testing.T) {
	f := newFixture(t)
	req := sample(t, "api-create-note.json")
	alice, bob := signedInAs(req, "user-alice"), signedInAs(withBody(req, `{"title":"Bob's","content":"other body"}`), "user-bob")
	cases := []struct {
		name   string
		req    events.APIGatewayV2HTTPRequest
		status int
		note   string // which caller's note it answers
	}{
		{"alice creates", alice, http.StatusCreated, "alice"},
		{"bob, same key, another body, creates his own", bob, http.StatusCreated, "bob"},
		{"alice retries and gets hers", alice, http.StatusOK, "alice"},
		{"bob retries and gets his", bob, http.StatusOK, "bob"},
	}
	ids := map[string]any{}
	for _, tc := range cases {
		status, body := f.do(t, tc.req)
		if status != tc.status {
			t.Fatalf("%s: %d %v; want %d", tc.name, status, body, tc.status)
		}
		if id, seen := ids[tc.note]; seen && body["id"] != id {
			t.Fatalf("%s: note %v; want %s's note %v", tc.name, body["id"], tc.note, id)
		}
		ids[tc.note] = body["id"]
	}
	if ids["alice"] == ids["bob"] {
		t.Fatalf("both callers got note %v; want one each", ids["alice"])
	}
	if got := f.kinds(t); got["note"] != 2 || got["outbox"] != 2 || got["request"] != 2 {
		t.Fatalf("items by kind = %v; want two notes, two outbox events, two requests", got)
	}
}
