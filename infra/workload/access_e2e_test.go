package workload_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// call sends one request to the local API with client and returns the status and JSON body.
func call(t *testing.T, client *http.Client, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: %d %q is not a JSON object", method, url, resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

// checkAccessRules sends each route of the application, through the local cloud's gateway
// and JWT authorizer, without a token, with a token lacking the right and with one having it.
func checkAccessRules(t *testing.T, ep localcloud.Endpoints) {
	acct := fmt.Sprintf("e2e-rules-%d", time.Now().UnixNano())
	as := func(sub string, scopes ...string) *http.Client { return ep.APIClient(sub, scopes...) }
	garbage := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r.Header.Set("Authorization", "Bearer not.a.jwt")
		return http.DefaultTransport.RoundTrip(r)
	})}
	note := `{"title":"Rules #go","content":"x"}`
	move := `{"amount":5,"reference":"r1"}`
	tests := []struct {
		name, method, path, body string
		client                   *http.Client
		status                   int
	}{
		{"create note without a token", "POST", "/notes", note, http.DefaultClient, 401},
		{"create note with an invalid token", "POST", "/notes", note, garbage, 401},
		{"create note with notes.read", "POST", "/notes", note, as("alice", "notes.read", "ledger.write"), 403},
		{"create note with notes.write", "POST", "/notes", note, as("alice", "notes.write"), 201},
		{"get note without a token", "GET", "/notes/n1", "", http.DefaultClient, 401},
		{"get note with notes.write", "GET", "/notes/n1", "", as("alice", "notes.write"), 403},
		{"get note with notes.read", "GET", "/notes/n1", "", as("alice", "notes.read"), 404},
		{"get tag without a token", "GET", "/tags/go", "", http.DefaultClient, 401},
		{"get tag with ledger.read", "GET", "/tags/go", "", as("alice", "ledger.read"), 403},
		{"get tag with notes.read", "GET", "/tags/go", "", as("alice", "notes.read"), 200},
		{"credit without a token", "POST", "/accounts/" + acct + "/credits", move, http.DefaultClient, 401},
		{"credit by the owner without ledger.write", "POST", "/accounts/" + acct + "/credits", move, as(acct, "ledger.read"), 403},
		{"credit with ledger.write", "POST", "/accounts/" + acct + "/credits", move, as("svc", "ledger.write"), 202},
		{"debit without a token", "POST", "/accounts/" + acct + "/debits", move, http.DefaultClient, 401},
		{"debit with notes.write", "POST", "/accounts/" + acct + "/debits", move, as("svc", "notes.write"), 403},
		{"debit with ledger.write", "POST", "/accounts/" + acct + "/debits", `{"amount":5,"reference":"r2"}`, as("svc", "ledger.write"), 202},
		{"get account without a token", "GET", "/accounts/" + acct, "", http.DefaultClient, 401},
		{"get account of another subject", "GET", "/accounts/" + acct, "", as("someone-else", "ledger.write", "notes.read"), 403},
		{"get account by its owner", "GET", "/accounts/" + acct + "-unused", "", as(acct + "-unused"), 404},
		{"get account with ledger.read", "GET", "/accounts/" + acct + "-unused", "", as("auditor", "ledger.read"), 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := call(t, tt.client, tt.method, ep.APIURL+tt.path, tt.body)
			if status != tt.status {
				t.Fatalf("got %d %v; want %d", status, body, tt.status)
			}
			switch {
			case status == 401 && body["message"] != "Unauthorized":
				t.Fatalf("401 body %v; want the gateway's {\"message\":\"Unauthorized\"}", body)
			case status == 403 && body["error"] == nil:
				t.Fatalf("403 body %v; want {\"error\": ...}", body)
			}
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// checkFlowWithTokens creates a note and a movement with valid tokens and waits until the
// note is tagged and the account's balance shows the movement, read back with tokens.
func checkFlowWithTokens(t *testing.T, ep localcloud.Endpoints) {
	acct := fmt.Sprintf("e2e-flow-%d", time.Now().UnixNano())
	status, note := call(t, ep.APIClient("alice", "notes.write"), "POST", ep.APIURL+"/notes", `{"title":"Flow","content":"about #tokens"}`)
	if status != 201 {
		t.Fatalf("create note = %d %v", status, note)
	}
	if status, body := call(t, ep.APIClient("payments", "ledger.write"), "POST", ep.APIURL+"/accounts/"+acct+"/credits", `{"amount":700,"reference":"flow-1"}`); status != 202 {
		t.Fatalf("credit = %d %v", status, body)
	}
	reader, owner := ep.APIClient("bob", "notes.read"), ep.APIClient(acct)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, got := call(t, reader, "GET", ep.APIURL+"/notes/"+note["id"].(string), "")
		status, account := call(t, owner, "GET", ep.APIURL+"/accounts/"+acct, "")
		tags, _ := got["tags"].([]any)
		if len(tags) == 1 && tags[0] == "tokens" && status == 200 && account["balance"] == 700.0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s: note %v, account %d %v; want the note tagged and a balance of 700", got, status, account)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
