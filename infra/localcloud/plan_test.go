package localcloud_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// The principals of every template here derive without anything started: each function with
// its role's policies, each managed policy as a role of its own.
func TestPrincipals_derive_each_templates_roles_before_anything_starts(t *testing.T) {
	for _, tpl := range []string{"../../template.yaml", "testdata/template.yaml", "testdata/backstop/template.yaml"} {
		t.Run(tpl, func(t *testing.T) {
			ps, err := localcloud.Principals(localcloud.Config{Template: tpl})
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) == 0 {
				t.Fatal("no principal")
			}
			for _, p := range ps {
				if len(p.Policies) == 0 || !strings.HasPrefix(p.ARN, "arn:aws:sts::000000000000:assumed-role/") {
					t.Errorf("principal %s: ARN %s, %d policies; want a role session with policies", p.Name, p.ARN, len(p.Policies))
				}
			}
		})
	}
}

// streamConsumerStatement is StreamConsumer's statement in testdata/template.yaml.
const streamConsumerStatement = `              Condition:
                ForAllValues:StringLike:
                  dynamodb:LeadingKeys: ["gate#*", "seen#*"]
`

// A policy element the gatekeeper cannot decide as AWS does stops the cloud at its start,
// before anything runs, naming the function, the policy, the statement and the element.
func TestStart_refuses_a_policy_it_cannot_evaluate_naming_function_statement_and_element(t *testing.T) {
	tests := []struct {
		name, condition, want string
	}{
		{"an operator it does not evaluate", `              Condition:
                NumericLessThan:
                  dynamodb:LeadingKeys: "3"
`, "condition operator NumericLessThan is not evaluated here"},
		{"a condition key it does not compute", `              Condition:
                IpAddress:
                  aws:SourceIp: 10.0.0.0/8
`, "condition operator IpAddress is not evaluated here"},
		{"a condition key it does not compute, with an operator it evaluates", `              Condition:
                StringEquals:
                  aws:SourceVpce: vpce-1
`, "Condition StringEquals aws:sourcevpce: the gatekeeper does not compute this condition key"},
		{"a policy variable", `              Condition:
                ForAllValues:StringLike:
                  dynamodb:LeadingKeys: ["${aws:userid}#*"]
`, "the policy variable ${aws:userid}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := os.ReadFile("testdata/template.yaml")
			if err != nil {
				t.Fatal(err)
			}
			text := strings.Replace(string(raw), "            - Effect: Allow\n              Action: [dynamodb:GetItem, dynamodb:PutItem]\n",
				"            - Sid: ReadGates\n              Effect: Allow\n              Action: [dynamodb:GetItem, dynamodb:PutItem]\n", 1)
			text = strings.Replace(text, streamConsumerStatement, tt.condition, 1)
			if !strings.Contains(text, "Sid: ReadGates") || strings.Contains(text, streamConsumerStatement) {
				t.Fatal("testdata/template.yaml no longer has StreamConsumer's statement to change")
			}
			dir := t.TempDir()
			tpl := filepath.Join(dir, "template.yaml")
			if err := os.WriteFile(tpl, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := localcloud.Start(ctx, localcloud.Config{Template: tpl, StateDir: filepath.Join(dir, "state"),
				DynamoDBEndpoint: "http://127.0.0.1:1", SQSEndpoint: "http://127.0.0.1:1"})
			if err == nil {
				c.Close()
				t.Fatal("the cloud started")
			}
			for _, want := range []string{"function StreamConsumer", "policy StreamConsumerRolePolicy0", "statement 0 (Sid ReadGates)", tt.want} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err %v; want it to name %q", err, want)
				}
			}
		})
	}
}
