package apptest

import (
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/internal/api"
)

// Subject is the token subject LoadEvent gives an API request that carries no claims.
const Subject = "apptest"

// AllScopes are every scope the API knows: what LoadEvent grants by default.
var AllScopes = []string{api.ScopeNotesWrite, api.ScopeNotesRead, api.ScopeLedgerWrite, api.ScopeLedgerRead}

// Authorized returns req as API Gateway's JWT authorizer hands it to the function for a valid
// token of sub granting scopes: the claims in requestContext.authorizer.jwt (as strings, the
// scopes also as the space-separated scope claim).
func Authorized(req events.APIGatewayV2HTTPRequest, sub string, scopes ...string) events.APIGatewayV2HTTPRequest {
	claims := map[string]string{"sub": sub, "iss": "https://issuer.example", "token_use": "access"}
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	req.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims, Scopes: scopes}}
	return req
}

// Anonymous returns req without authorizer claims, as no route behind the JWT authorizer
// ever receives it.
func Anonymous(req events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPRequest {
	req.RequestContext.Authorizer = nil
	return req
}

// authorizeByDefault gives an API request without claims those of Subject with AllScopes,
// so that tests of routes that are not about access need no token code of their own.
func authorizeByDefault(v any) {
	req, ok := v.(*events.APIGatewayV2HTTPRequest)
	if ok && req.Version == "2.0" && req.RequestContext.Authorizer == nil {
		*req = Authorized(*req, Subject, AllScopes...)
	}
}
