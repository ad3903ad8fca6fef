package localcloud

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"go.yaml.in/yaml/v3"
)

// defaultAudience is the aud of local tokens when no JWT authorizer of the template names one.
const defaultAudience = "localcloud"

// jwtAuth is a JWT authorizer of an AWS::Serverless::HttpApi as the local gateway enforces it.
// Its issuer is always the local issuer: the template's issuer (a Cognito user pool, say) is
// never resolved locally; its audience is the template's.
type jwtAuth struct {
	name     string
	audience []string
	header   string // the request header holding the token, from IdentitySource
}

// routeAuth returns the JWT authorizer an HttpApi event runs behind, or nil for none: the
// event's own Auth.Authorizer, else its API's Auth.DefaultAuthorizer. Routes of the implicit
// API (no ApiId) have none, as Globals.HttpApi is not read.
func (c *Cloud) routeAuth(function string, ev Event) (*jwtAuth, error) {
	if ev.API == "" {
		return nil, nil
	}
	props, ok := c.tmpl.Properties[ev.API]
	if !ok || c.tmpl.Types[ev.API] != typeHTTPAPI {
		return nil, fmt.Errorf("function %s: event %s: ApiId %s is not an AWS::Serverless::HttpApi of the template", function, ev.Name, ev.API)
	}
	auth := lookup(props, "Auth")
	name := ev.Authorizer
	if name == "" {
		name = scalar(lookup(auth, "DefaultAuthorizer"))
	}
	if name == "" || name == "NONE" {
		return nil, nil
	}
	def := lookup(lookup(auth, "Authorizers"), name)
	jc := lookup(def, "JwtConfiguration")
	if jc == nil {
		return nil, fmt.Errorf("api %s: authorizer %s is not a JWT authorizer of its Auth.Authorizers (only JWT authorizers are emulated)", ev.API, name)
	}
	a := &jwtAuth{name: name, header: "Authorization"}
	if src := scalar(lookup(def, "IdentitySource")); src != "" {
		h, ok := strings.CutPrefix(src, "$request.header.")
		if !ok {
			return nil, fmt.Errorf("api %s: authorizer %s: IdentitySource %s is not a request header", ev.API, name, src)
		}
		a.header = h
	}
	var err error
	if a.audience, err = c.audience(lookup(jc, "audience")); err != nil {
		return nil, fmt.Errorf("api %s: authorizer %s: audience: %w", ev.API, name, err)
	}
	return a, nil
}

func (c *Cloud) audience(n *yaml.Node) ([]string, error) {
	v, err := c.refs.resolve(n)
	if err != nil {
		return nil, err
	}
	var out []string
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	for _, it := range items {
		s, err := stringify(it)
		if err != nil {
			return nil, err
		}
		if s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("none given")
	}
	return out, nil
}

// authenticate checks the request's token as API Gateway does and returns the authorizer
// context a payload 2.0 event carries: the claims as strings and the scopes of the scope claim.
func (a *apiShim) authenticate(req *http.Request, auth *jwtAuth) (*events.APIGatewayV2HTTPRequestContextAuthorizerDescription, error) {
	raw := strings.TrimSpace(req.Header.Get(auth.header))
	if len(raw) > 7 && strings.EqualFold(raw[:7], "bearer ") {
		raw = strings.TrimSpace(raw[7:])
	}
	if raw == "" {
		return nil, fmt.Errorf("%w: no token in the %s header", errToken, auth.header)
	}
	claims, err := a.issuer.verify(raw, auth.audience)
	if err != nil {
		return nil, err
	}
	jwtCtx := &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{}}
	for k, v := range claims {
		jwtCtx.Claims[k] = claimString(v)
	}
	jwtCtx.Scopes = strings.Fields(jwtCtx.Claims["scope"])
	return &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: jwtCtx}, nil
}

// claimString renders a claim as API Gateway passes claims on: strings as they are, numbers
// in decimal, arrays as "[a b]".
func claimString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = claimString(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case map[string]any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return fmt.Sprint(v)
}

// writeUnauthorized answers as API Gateway does when its JWT authorizer refuses a request.
func writeUnauthorized(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte(`{"message":"Unauthorized"}`))
}
