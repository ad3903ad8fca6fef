package localcloud_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// claims returns the claims of a token the endpoint would issue for the echo API, changed by
// edit.
func claims(iss string, edit func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": iss, "sub": "alice", "aud": "echo-test", "scope": "echo.read",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	if edit != nil {
		edit(c)
	}
	return c
}

func TestIssuer_serves_discovery_and_the_jwks_that_verifies_its_tokens(t *testing.T) {
	ep := cloud(t).Endpoints()
	if ep.Issuer == "" || ep.TokenURL != ep.Issuer+"/token" {
		t.Fatalf("issuer %q, tokenUrl %q; want both, tokenUrl under the issuer", ep.Issuer, ep.TokenURL)
	}
	var disc struct{ Issuer, JwksURI, TokenEndpoint string }
	var raw map[string]any
	resp, body := send(t, http.DefaultClient, "GET", ep.Issuer+"/.well-known/openid-configuration", nil, nil)
	if resp.StatusCode != 200 || json.Unmarshal(body, &raw) != nil {
		t.Fatalf("discovery: %d %s", resp.StatusCode, body)
	}
	disc.Issuer, _ = raw["issuer"].(string)
	disc.JwksURI, _ = raw["jwks_uri"].(string)
	disc.TokenEndpoint, _ = raw["token_endpoint"].(string)
	if disc.Issuer != ep.Issuer || disc.TokenEndpoint != ep.TokenURL || disc.JwksURI == "" {
		t.Fatalf("discovery = %v; want issuer %s, token endpoint %s and a jwks_uri", raw, ep.Issuer, ep.TokenURL)
	}
	var jwks struct {
		Keys []struct{ Kty, Alg, Kid, N, E string }
	}
	resp, body = send(t, http.DefaultClient, "GET", disc.JwksURI, nil, nil)
	if resp.StatusCode != 200 || json.Unmarshal(body, &jwks) != nil || len(jwks.Keys) != 1 {
		t.Fatalf("jwks: %d %s", resp.StatusCode, body)
	}
	k := jwks.Keys[0]
	n, err1 := base64.RawURLEncoding.DecodeString(k.N)
	e, err2 := base64.RawURLEncoding.DecodeString(k.E)
	if k.Kty != "RSA" || k.Alg != "RS256" || err1 != nil || err2 != nil {
		t.Fatalf("jwks key = %+v; want an RS256 RSA key", k)
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	tok, _, err := ep.Token(t.Context(), "alice", "notes.write", "notes.read")
	if err != nil {
		t.Fatal(err)
	}
	got := jwt.MapClaims{}
	parsed, err := jwt.ParseWithClaims(tok, got, func(t *jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(ep.Issuer), jwt.WithAudience("echo-test"))
	if err != nil || parsed.Header["kid"] != k.Kid {
		t.Fatalf("token does not verify with the JWKS key %s: %v", k.Kid, err)
	}
	if got["sub"] != "alice" || got["scope"] != "notes.write notes.read" {
		t.Fatalf("claims = %v; want sub alice and the scopes asked for", got)
	}
}

func TestIssuer_token_endpoint_answers_the_documented_shape(t *testing.T) {
	ep := cloud(t).Endpoints()
	resp, body := send(t, http.DefaultClient, "POST", ep.TokenURL, []byte(`{"sub":"alice","scope":"notes.write notes.read"}`), nil)
	var out map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil {
		t.Fatalf("token: %d %s", resp.StatusCode, body)
	}
	if tok, _ := out["access_token"].(string); strings.Count(tok, ".") != 2 || out["token_type"] != "Bearer" || out["expires_in"] != 3600.0 || len(out) != 3 {
		t.Fatalf("token answer = %s; want access_token (a JWT), token_type Bearer, expires_in 3600", body)
	}
	for _, bad := range []string{``, `{}`, `{"sub":""}`, `{"sub":"a","admin":true}`, `not json`} {
		if resp, body := send(t, http.DefaultClient, "POST", ep.TokenURL, []byte(bad), nil); resp.StatusCode != 400 {
			t.Errorf("token request %q: %d %s; want 400", bad, resp.StatusCode, body)
		}
	}
}

func TestAPI_jwt_authorizer_refuses_what_api_gateway_refuses(t *testing.T) {
	c := cloud(t)
	ep := c.Endpoints()
	sign := func(edit func(jwt.MapClaims)) string {
		tok, err := c.Issuer().Sign(claims(ep.Issuer, edit))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	valid := sign(nil)
	forged := jwt.NewWithClaims(jwt.SigningMethodRS256, claims(ep.Issuer, nil))
	forged.Header["kid"] = validHeaderKid(t, valid)
	forgedTok, _ := forged.SignedString(other)
	hmac, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(ep.Issuer, nil)).SignedString([]byte("secret"))
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims(ep.Issuer, nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	parts := strings.Split(valid, ".")
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"mallory","aud":"echo-test","exp":9999999999}`)) + "." + parts[2]
	tests := []struct {
		name, authorization string
	}{
		{"no token", ""},
		{"not a JWT", "Bearer not-a-jwt"},
		{"signed by another key", "Bearer " + forgedTok},
		{"payload changed after signing", "Bearer " + tampered},
		{"HMAC-signed", "Bearer " + hmac},
		{"unsigned (alg none)", "Bearer " + none},
		{"another issuer", "Bearer " + sign(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })},
		{"another audience", "Bearer " + sign(func(c jwt.MapClaims) { c["aud"] = "another-api" })},
		{"no audience", "Bearer " + sign(func(c jwt.MapClaims) { delete(c, "aud") })},
		{"expired", "Bearer " + sign(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() })},
		{"without exp", "Bearer " + sign(func(c jwt.MapClaims) { delete(c, "exp") })},
		{"not yet valid (nbf)", "Bearer " + sign(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() })},
		{"issued in the future", "Bearer " + sign(func(c jwt.MapClaims) { c["iat"] = time.Now().Add(time.Hour).Unix() })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.authorization != "" {
				h.Set("Authorization", tt.authorization)
			}
			resp, body := send(t, http.DefaultClient, "GET", ep.APIURL+"/echo/1", nil, h)
			if resp.StatusCode != 401 || string(body) != `{"message":"Unauthorized"}` {
				t.Fatalf("got %d %s; want the gateway's own 401 {\"message\":\"Unauthorized\"}", resp.StatusCode, body)
			}
		})
	}
}

// validHeaderKid returns the kid of a token's header.
func validHeaderKid(t *testing.T, tok string) string {
	t.Helper()
	p, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
	if err != nil {
		t.Fatal(err)
	}
	kid, _ := p.Header["kid"].(string)
	return kid
}

func TestAPI_jwt_authorizer_passes_claims_and_scopes_in_the_request_context(t *testing.T) {
	c := cloud(t)
	ep := c.Endpoints()
	cognitoStyle, err := c.Issuer().Sign(claims(ep.Issuer, func(c jwt.MapClaims) { delete(c, "aud"); c["client_id"] = "other-client" }))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		client *http.Client
		header http.Header
		sub    string
		scopes string
	}{
		{"a token from the token endpoint", ep.APIClient("alice", "notes.write", "notes.read"), nil, "alice", "notes.write notes.read"},
		{"a token without the Bearer prefix", http.DefaultClient, http.Header{"Authorization": {cognitoStyle}}, "alice", "echo.read"},
		{"a Cognito-style access token (client_id, no aud)", http.DefaultClient, http.Header{"Authorization": {"Bearer " + cognitoStyle}}, "alice", "echo.read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := send(t, tt.client, "GET", ep.APIURL+"/echo/7", nil, tt.header)
			var got echo
			if resp.StatusCode != 201 || json.Unmarshal(body, &got) != nil {
				t.Fatalf("got %d %s; want 201", resp.StatusCode, body)
			}
			a := got.Request.RequestContext.Authorizer
			if a == nil || a.JWT == nil {
				t.Fatalf("no requestContext.authorizer.jwt in %s", body)
			}
			if a.JWT.Claims["sub"] != tt.sub || a.JWT.Claims["scope"] != tt.scopes || strings.Join(a.JWT.Scopes, " ") != tt.scopes ||
				a.JWT.Claims["iss"] != ep.Issuer || a.JWT.Claims["exp"] == "" {
				t.Fatalf("authorizer.jwt = %+v; want sub %s, scopes %q, iss and exp as strings", a.JWT, tt.sub, tt.scopes)
			}
		})
	}
}

func TestAPI_routes_without_an_authorizer_need_no_token(t *testing.T) {
	ep := cloud(t).Endpoints()
	for _, c := range []struct{ method, path string }{{"GET", "/public/1"}, {"POST", "/echo"}} {
		resp, body := send(t, http.DefaultClient, c.method, ep.APIURL+c.path, nil, nil)
		var got echo
		if resp.StatusCode != 201 || json.Unmarshal(body, &got) != nil {
			t.Fatalf("%s %s without a token: %d %s; want 201", c.method, c.path, resp.StatusCode, body)
		}
		if got.Request.RequestContext.Authorizer != nil {
			t.Errorf("%s %s: authorizer context %+v; want none", c.method, c.path, got.Request.RequestContext.Authorizer)
		}
	}
}

func TestEndpoints_file_names_the_issuer_and_token_url(t *testing.T) {
	c := cloud(t)
	b, err := os.ReadFile(filepath.Join(c.StateDir(), "endpoints.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["issuer"] != c.Endpoints().Issuer || raw["tokenUrl"] != c.Endpoints().TokenURL || raw["issuer"] == "" {
		t.Fatalf("endpoints.json issuer %v, tokenUrl %v; want %s and %s", raw["issuer"], raw["tokenUrl"], c.Endpoints().Issuer, c.Endpoints().TokenURL)
	}
}
