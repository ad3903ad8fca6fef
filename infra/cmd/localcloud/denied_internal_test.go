package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/infra/localcloud"
)

// make run's last words when it stopped at a refusal: the function, the action, the resource,
// the statement that came closest and why, and where to grant it.
func TestPrintDenied_names_function_action_resource_and_closest_statement(t *testing.T) {
	var out strings.Builder
	printDenied(&out, gatekeeper.Denial{Principal: "LedgerFunction", Action: "dynamodb:ConditionCheckItem",
		Resource: "arn:aws:dynamodb:us-east-1:000000000000:table/idem", Closest: "LedgerFunctionRolePolicy0 statement 1 (Allow dynamodb:PutItem on ...)",
		Why: "its actions do not include dynamodb:ConditionCheckItem"}, "template.yaml", ".local/logs/localcloud.log")
	for _, want := range []string{"STOPPED: the gatekeeper refused a call of LedgerFunction", "function:  LedgerFunction", "action:    dynamodb:ConditionCheckItem",
		"resource:  arn:aws:dynamodb:us-east-1:000000000000:table/idem", "closest:   LedgerFunctionRolePolicy0 statement 1", "why:       its actions do not include",
		"grant dynamodb:ConditionCheckItem to LedgerFunction in template.yaml"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed\n%s\nwant it to say %q", out.String(), want)
		}
	}
}

// make invoke prints each refusal counted during its invocation, once, with why; not those
// counted before it.
func TestPrintNewDenials_prints_the_refusals_counted_during_the_invocation(t *testing.T) {
	old := gatekeeper.Denial{Principal: "Echo", Action: "sqs:SendMessage", Resource: "arn:aws:sqs:us-east-1:000000000000:q", Count: 2}
	stats := localcloud.Stats{Access: &gatekeeper.Stats{Denied: 5, Denials: []gatekeeper.Denial{
		{Principal: "Echo", Action: "sqs:SendMessage", Resource: "arn:aws:sqs:us-east-1:000000000000:q", Count: 2},
		{Principal: "LedgerFunction", Action: "dynamodb:ConditionCheckItem", Resource: "arn:aws:dynamodb:us-east-1:000000000000:table/idem", Count: 3,
			Closest: "LedgerFunctionRolePolicy0 statement 1 (...)", Why: "its actions do not include dynamodb:ConditionCheckItem"}}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/localcloud/stats" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(stats)
	}))
	defer srv.Close()
	var out strings.Builder
	printNewDenials(&out, localcloud.Endpoints{LambdaURL: srv.URL}, &gatekeeper.Stats{Denied: 2, Denials: []gatekeeper.Denial{old}})
	want := "DENIED LedgerFunction was refused dynamodb:ConditionCheckItem on arn:aws:dynamodb:us-east-1:000000000000:table/idem (3 times); " +
		"the closest statement, LedgerFunctionRolePolicy0 statement 1 (...), does not allow it: its actions do not include dynamodb:ConditionCheckItem\n"
	if out.String() != want {
		t.Errorf("printed %q; want %q", out.String(), want)
	}
}
