package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/gatekeeper"
)

// Each refusal is shown once, with why, as the progress lines go by; the invariant names every
// refusal with the statement that came closest.
func TestDenials_are_shown_once_each_and_named_by_the_invariant(t *testing.T) {
	first := gatekeeper.Denial{Principal: "LedgerFunction", Action: "dynamodb:ConditionCheckItem", Resource: "arn:aws:dynamodb:us-east-1:000000000000:table/idem",
		Count: 3, Closest: "LedgerFunctionRolePolicy0 statement 1 (Allow dynamodb:PutItem on ...)", Why: "its actions do not include dynamodb:ConditionCheckItem", At: time.Now()}
	second := gatekeeper.Denial{Principal: "NoteTaggerFunction", Action: "sqs:SendMessage", Resource: "arn:aws:sqs:us-east-1:000000000000:q",
		Count: 1, Why: "refused by an explicit Deny, P statement 0 (Deny sqs:* on *)"}
	r := &run{}
	var out strings.Builder
	if n := r.printDenials(&out, &gatekeeper.Stats{Denied: 3, Denials: []gatekeeper.Denial{first}}); n != 3 {
		t.Errorf("denied %d; want 3", n)
	}
	r.printDenials(&out, &gatekeeper.Stats{Denied: 4, Denials: []gatekeeper.Denial{first, second}})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"DENIED LedgerFunction was refused dynamodb:ConditionCheckItem on arn:aws:dynamodb:us-east-1:000000000000:table/idem (3 times); the closest statement, LedgerFunctionRolePolicy0 statement 1 (Allow dynamodb:PutItem on ...), does not allow it: its actions do not include dynamodb:ConditionCheckItem",
		"DENIED NoteTaggerFunction was refused sqs:SendMessage on arn:aws:sqs:us-east-1:000000000000:q: refused by an explicit Deny, P statement 0 (Deny sqs:* on *)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), strings.Join(want, "\n"))
	}
	problems, _ := denialProblems(gatekeeper.Stats{Denied: 4, Denials: []gatekeeper.Denial{first, second}})
	if len(problems) != 2 || !strings.Contains(problems[0], "closest: LedgerFunctionRolePolicy0 statement 1") {
		t.Errorf("invariant problems %q; want each refusal, with the closest statement", problems)
	}
}
