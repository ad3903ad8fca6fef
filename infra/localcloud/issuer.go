package localcloud

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TokenLifetime is how long the local issuer's tokens are valid.
const TokenLifetime = time.Hour

// Issuer is the local cloud's OpenID Connect issuer: an RSA key made at start, its JWKS and
// discovery document, and a token endpoint for development and tests. It stands in for the
// Cognito user pool or other issuer the template's JWT authorizers name. Its methods are safe
// for concurrent use.
type Issuer struct {
	url      string
	key      *rsa.PrivateKey
	kid      string
	audience string // the aud of the tokens the endpoint issues
	now      func() time.Time
}

// newIssuer makes a fresh signing key; url is where the issuer is served.
func newIssuer(url, audience string) (*Issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("issuer key: %w", err)
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	return &Issuer{url: url, key: key, kid: fmt.Sprintf("local-%x", id), audience: audience, now: time.Now}, nil
}

// URL is the issuer identifier: the iss claim of its tokens.
func (i *Issuer) URL() string { return i.url }

// Sign signs claims as the issuer (RS256, with its key id). Tests use it for tokens the token
// endpoint does not issue (expired, another audience or issuer).
func (i *Issuer) Sign(claims jwt.MapClaims) (string, error) {
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = i.kid
	return t.SignedString(i.key)
}

// Issue returns an access token for sub granting scope (space-separated), valid for
// TokenLifetime, with the issuer's default audience.
func (i *Issuer) Issue(sub, scope string) (string, error) {
	now := i.now()
	c := jwt.MapClaims{"iss": i.url, "sub": sub, "aud": i.audience, "iat": now.Unix(), "nbf": now.Unix(),
		"exp": now.Add(TokenLifetime).Unix(), "token_use": "access"}
	if scope != "" {
		c["scope"] = scope
	}
	return i.Sign(c)
}

// jwk is one RSA public key of the issuer's JWKS.
type jwk struct {
	Kty string `json:"kty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	N   string `json:"n"`
	E   string `json:"e"`
}

func (i *Issuer) jwks() map[string][]jwk {
	pub := i.key.PublicKey
	b64 := base64.RawURLEncoding.EncodeToString
	return map[string][]jwk{"keys": {{Kty: "RSA", Use: "sig", Alg: "RS256", Kid: i.kid,
		N: b64(pub.N.Bytes()), E: b64(big.NewInt(int64(pub.E)).Bytes())}}}
}

// ServeHTTP serves discovery, the JWKS and the token endpoint.
func (i *Issuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/.well-known/openid-configuration":
		writeJSONStatus(w, http.StatusOK, map[string]any{"issuer": i.url, "jwks_uri": i.url + "/.well-known/jwks.json",
			"token_endpoint": i.url + "/token", "response_types_supported": []string{"token"},
			"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"},
			"grant_types_supported": []string{"urn:onceflow:local-dev"}})
	case r.Method == http.MethodGet && r.URL.Path == "/.well-known/jwks.json":
		writeJSONStatus(w, http.StatusOK, i.jwks())
	case r.Method == http.MethodPost && r.URL.Path == "/token":
		i.token(w, r)
	default:
		writeJSONStatus(w, http.StatusNotFound, map[string]string{"error": "not_found"})
	}
}

// tokenRequest is the body of POST /token: {"sub":"alice","scope":"notes.write notes.read"}.
type tokenRequest struct {
	Sub   string `json:"sub"`
	Scope string `json:"scope"`
}

func (i *Issuer) token(w http.ResponseWriter, r *http.Request) {
	var req tokenRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || strings.TrimSpace(req.Sub) == "" {
		writeJSONStatus(w, http.StatusBadRequest, map[string]string{"error": "invalid_request",
			"error_description": `want a JSON body {"sub":"<subject>","scope":"<space-separated scopes>"}`})
		return
	}
	tok, err := i.Issue(req.Sub, req.Scope)
	if err != nil {
		writeJSONStatus(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	writeJSONStatus(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer",
		"expires_in": int(TokenLifetime.Seconds())})
}

// errToken is why the gateway refused a token.
var errToken = errors.New("invalid token")

// verify checks a token as API Gateway's JWT authorizer does: an RS256 signature by a key of
// the issuer's JWKS (by kid), iss equal to the issuer, exp required and in the future, nbf and
// iat not in the future, and aud (or client_id, as Cognito access tokens carry) one of
// audience. It returns the token's claims.
func (i *Issuer) verify(token string, audience []string) (jwt.MapClaims, error) {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		if t.Header["kid"] != i.kid {
			return nil, fmt.Errorf("unknown key id %v", t.Header["kid"])
		}
		return &i.key.PublicKey, nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(i.url), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithTimeFunc(i.now), jwt.WithJSONNumber())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errToken, err)
	}
	aud, _ := claims.GetAudience()
	if cid, ok := claims["client_id"].(string); ok {
		aud = append(aud, cid)
	}
	for _, a := range aud {
		for _, want := range audience {
			if a == want {
				return claims, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: audience %v is not one of %v", errToken, aud, audience)
}

func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
