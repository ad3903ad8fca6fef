package main

import (
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/gatekeeper"
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
