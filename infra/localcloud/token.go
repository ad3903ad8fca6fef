package localcloud

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Token asks the local issuer's token endpoint (TokenURL) for an access token of sub granting
// scopes, and returns it with its lifetime.
func (e Endpoints) Token(ctx context.Context, sub string, scopes ...string) (string, time.Duration, error) {
	if e.TokenURL == "" {
		return "", 0, fmt.Errorf("token: the endpoints have no tokenUrl (is the local cloud up? `localcloud up`; in this repository: make up)")
	}
	body, _ := json.Marshal(tokenRequest{Sub: sub, Scope: strings.Join(scopes, " ")})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.TokenURL, bytes.NewReader(body))
	if err != nil {
		return "", 0, fmt.Errorf("token: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("token: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || out.AccessToken == "" {
		return "", 0, fmt.Errorf("token: %s: %s", resp.Status, b)
	}
	return out.AccessToken, time.Duration(out.ExpiresIn) * time.Second, nil
}

// APIClient returns an HTTP client for the local API that sends every request with a bearer
// token of sub granting scopes, fetched from TokenURL on first use and again a minute before
// it expires. A request that has its own Authorization header keeps it.
func (e Endpoints) APIClient(sub string, scopes ...string) *http.Client {
	return &http.Client{Timeout: 30 * time.Second,
		Transport: &bearer{endpoints: e, sub: sub, scopes: scopes, base: http.DefaultTransport}}
}

// bearer adds a token to requests. It is safe for concurrent use.
type bearer struct {
	endpoints Endpoints
	sub       string
	scopes    []string
	base      http.RoundTripper

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		return b.base.RoundTrip(req)
	}
	tok, err := b.current(req.Context())
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok)
	return b.base.RoundTrip(req)
}

func (b *bearer) current(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.token != "" && time.Now().Before(b.renewAt) {
		return b.token, nil
	}
	tok, ttl, err := b.endpoints.Token(ctx, b.sub, b.scopes...)
	if err != nil {
		return "", err
	}
	b.token, b.renewAt = tok, time.Now().Add(ttl-time.Minute)
	return tok, nil
}
