package workload

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Identities the workload sends its requests as: real tokens of the local issuer.
var (
	// writerScopes are the scopes of the workload's client: it creates notes and movements.
	writerScopes = []string{"notes.write", "ledger.write"}
)

// apiClient is the workload's client for its requests: a token of sub "workload" granting
// writerScopes.
func (r *run) apiClient() *http.Client {
	return r.cloud.Endpoints().APIClient("workload", writerScopes...)
}

// ownerClient reads an account as its owner: a token whose sub is the account id, no scope.
// One client (one token) per account, made on first use.
func (r *run) ownerClient(account string) *http.Client {
	r.ownersMu.Lock()
	defer r.ownersMu.Unlock()
	if r.owners == nil {
		r.owners = map[string]*http.Client{}
	}
	c, ok := r.owners[account]
	if !ok {
		c = r.cloud.Endpoints().APIClient(account)
		next := c.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		c.Transport = retryReads{next: next} // reads only: the workload's writes count their retries
		c.Timeout = 0                        // each attempt has its bound (retryReads), not the whole read
		r.owners[account] = c
	}
	return c
}

// probe is one request the API must refuse (or, for the owner, allow).
type probe struct {
	what, method, path string
	client             *http.Client
	want               func(status int) bool
	wantText           string
}

// accessProblems sends requests that the access rules must answer 401 or 403, and one the
// owner rule must let through; none of them writes anything.
func (r *run) accessProblems(ctx context.Context) ([]string, string) {
	ep := r.cloud.Endpoints()
	acct := "acct-000"
	is := func(code int) func(int) bool { return func(s int) bool { return s == code } }
	probes := []probe{
		{"a note without a token", http.MethodPost, "/notes", http.DefaultClient, is(http.StatusUnauthorized), "401"},
		{"a credit with notes.write only", http.MethodPost, "/accounts/" + acct + "/credits", ep.APIClient("probe", "notes.write"), is(http.StatusForbidden), "403"},
		{"another subject's account", http.MethodGet, "/accounts/" + acct, ep.APIClient("acct-001", "ledger.write"), is(http.StatusForbidden), "403"},
		{"the owner's account", http.MethodGet, "/accounts/" + acct, r.ownerClient(acct),
			func(s int) bool { return s == http.StatusOK || s == http.StatusNotFound }, "200 or 404"},
	}
	var p []string
	for _, pr := range probes {
		status, err := r.sendAnswered(ctx, pr)
		switch {
		case err != nil:
			p = append(p, fmt.Sprintf("%s: %v", pr.what, err))
		case !pr.want(status):
			p = append(p, fmt.Sprintf("%s answered %d; want %s", pr.what, status, pr.wantText))
		}
	}
	return p, fmt.Sprintf("%d probes: 401 without a token, 403 without the scope or ownership, the owner let through", len(probes))
}

// sendAnswered sends pr until the API answers it: a 5xx or a network error (an environment
// killed during the invocation, an injected fault under chaos) says nothing of the access
// rules, so the probe is sent again, up to 5 times.
func (r *run) sendAnswered(ctx context.Context, pr probe) (status int, err error) {
	for attempt := 1; ; attempt++ {
		status, err = r.send(ctx, pr)
		if (err == nil && status < 500) || attempt == 5 || ctx.Err() != nil {
			return status, err
		}
		time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
	}
}

func (r *run) send(ctx context.Context, pr probe) (int, error) {
	req, err := http.NewRequestWithContext(ctx, pr.method, r.cloud.Endpoints().APIURL+pr.path,
		strings.NewReader(`{"title":"probe","content":"probe","amount":1,"reference":"probe"}`))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := pr.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}
