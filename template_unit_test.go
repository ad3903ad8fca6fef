package onceflow_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/consumerunit"
	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/sam/samtest"
)

// unitProjects are projects as onceflow init writes them: one consumer, and two (the second
// added, with HoldGroup and a function directory of its own).
var unitProjects = map[string]consumerunit.Project{
	"one consumer": {Name: "shop", Consumers: []consumerunit.Consumer{
		{Name: "orders", Types: []string{"order.placed"}}}},
	"two consumers": {Name: "shop", Consumers: []consumerunit.Consumer{
		{Name: "orders", Types: []string{"order.placed"}, CodeUri: "functions/orders"},
		{Name: "stock-level", Types: []string{"order.placed", "stock.counted"}, CodeUri: "functions/stock-level", HoldGroup: true}}},
}

// unitTemplate writes p's template into a temporary directory and returns its path.
func unitTemplate(t *testing.T, p consumerunit.Project) string {
	t.Helper()
	b, err := consumerunit.Template(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "template.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A project's template (onceflow init's) deploys as the demo's does: the SAM translator and
// cfn-lint accept it, the local cloud's gatekeeper derives the roles the translator writes,
// and the operator's tool finds each consumer's queues, its name and the tables in its outputs.
func TestUnitTemplate_passes_the_translator_cfn_lint_and_the_gatekeeper(t *testing.T) {
	for name, p := range unitProjects {
		t.Run(name, func(t *testing.T) {
			path := unitTemplate(t, p)
			if _, _, err := samtest.Translate(path); err != nil {
				t.Fatal(err)
			}
			if err := samtest.Lint(path); err != nil {
				t.Fatal(err)
			}
			rolesEqualTheTranslators(t, path)
			tpl, err := localcloud.LoadDocument(path)
			if err != nil {
				t.Fatal(err)
			}
			names := strings.Split(get(tpl, "Outputs", "ConsumerNames", "Value").(string), ",")
			for _, c := range p.Consumers {
				if !slices.Contains(names, c.Name) {
					t.Errorf("ConsumerNames %v; want %s among them", names, c.Name)
				}
				for _, q := range []string{c.ID() + "Queue", c.ID() + "DeadLetterQueue"} {
					if refTarget(get(tpl, "Outputs", q+"Url", "Value")) != q {
						t.Errorf("no output %sUrl", q)
					}
				}
			}
			for _, o := range []string{"AppTableName", "IdempotencyTableName", "OperatorPolicyArn"} {
				if get(tpl, "Outputs", o) == nil {
					t.Errorf("no output %s", o)
				}
			}
		})
	}
}

// The demo's SQS consumers are their consumer units (demoUnits): each resource of a unit's
// rendering, its LeadingKeys and its outputs are template.yaml's, value for value (comments
// aside), and the template has a section of its own for each. A hand edit of one of them in
// template.yaml fails here: change the unit or its parameters instead.
func TestTemplate_demo_consumers_are_their_units(t *testing.T) {
	raw, err := os.ReadFile("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tpl := loadTemplate(t)
	for _, u := range demoUnits {
		t.Run(u.Name, func(t *testing.T) {
			if !strings.Contains(string(raw), consumerunit.Banner+u.Name+"\n") {
				t.Errorf("template.yaml has no section of its own for %s (%q)", u.Name, strings.TrimSpace(consumerunit.Banner+u.Name))
			}
			for _, d := range unitDifferences(t, tpl, u) {
				t.Error(d)
			}
		})
	}
	// The check fails on a hand edit: the ledger's role without its hold grants.
	stmts := asList(get(tpl, "Resources", "LedgerFunction", "Properties", "Policies"))[0].(doc)["Statement"].([]any)
	stmts[1].(doc)["Action"] = []any{"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:UpdateItem"}
	if d := unitDifferences(t, tpl, demoUnits[1]); len(d) != 1 || !strings.Contains(d[0], "LedgerFunction") {
		t.Errorf("the ledger's role edited by hand: %q; want one difference, LedgerFunction's", d)
	}
}

// unitDifferences lists what of u's rendering tpl does not have as rendered.
func unitDifferences(t *testing.T, tpl doc, u consumerunit.Unit) []string {
	t.Helper()
	var out []string
	unit := renderedUnit(t, u)
	for _, part := range []string{"Resources", "Outputs"} {
		for id, want := range get(unit, part).(doc) {
			if got := get(tpl, part, id); !reflect.DeepEqual(got, want) {
				out = append(out, fmt.Sprintf("%s %s in template.yaml is not its unit's:\n got  %s\n want %s", part, id, jsonOf(got), jsonOf(want)))
			}
		}
	}
	id := u.ID + "Function"
	if got, want := get(tpl, "Mappings", "LeadingKeys", id), get(unit, "Mappings", "LeadingKeys", id); !reflect.DeepEqual(got, want) {
		out = append(out, fmt.Sprintf("Mappings LeadingKeys %s: %s; its unit's %s", id, jsonOf(got), jsonOf(want)))
	}
	return out
}

// renderedUnit is u spliced into a template of nothing but the unit's places, read back
// without the operator's lines (a resource of the skeleton's own).
func renderedUnit(t *testing.T, u consumerunit.Unit) doc {
	t.Helper()
	skeleton := "Mappings:\n  LeadingKeys:\n" + consumerunit.MarkLeadingKeys + "Resources:\n  Operator:\n    Places:\n" +
		"      DLQs:\n" + consumerunit.MarkOperatorDLQs + "      Queues:\n" + consumerunit.MarkOperatorQueue +
		"      Keys:\n" + consumerunit.MarkOperatorKeys + "\nOutputs:\n  ConsumerNames:\n    Value: \"\"\n"
	b, err := consumerunit.Splice([]byte(skeleton), u)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "unit.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := localcloud.LoadDocument(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	delete(get(d, "Resources").(doc), "Operator")
	delete(get(d, "Outputs").(doc), "ConsumerNames")
	return d
}

// Every alarm is named after its stack ("${AWS::StackName}-..."), in template.yaml and in a
// project's template, so that two stacks of one stage in one account never share an alarm's
// name; so is the dashboard, whose name is the account's too.
func TestTemplate_alarms_and_dashboards_are_named_by_the_stack(t *testing.T) {
	paths := []string{"template.yaml"}
	for _, p := range unitProjects {
		paths = append(paths, unitTemplate(t, p))
	}
	for _, path := range paths {
		tpl, err := localcloud.LoadDocument(path)
		if err != nil {
			t.Fatal(err)
		}
		alarms := resourcesOfType(tpl, "AWS::CloudWatch::Alarm")
		if len(alarms) == 0 {
			t.Errorf("%s: no alarm", path)
		}
		for id, a := range alarms {
			if name, _ := get(a, "Properties", "AlarmName", "Fn::Sub").(string); !strings.HasPrefix(name, "${AWS::StackName}-") {
				t.Errorf("%s: %s is named %v; want !Sub \"${AWS::StackName}-...\"", path, id, get(a, "Properties", "AlarmName"))
			}
		}
		for id, d := range resourcesOfType(tpl, "AWS::CloudWatch::Dashboard") {
			if name, _ := get(d, "Properties", "DashboardName", "Fn::Sub").(string); !strings.HasPrefix(name, "${AWS::StackName}-") {
				t.Errorf("%s: %s is named %v; want !Sub \"${AWS::StackName}-...\"", path, id, get(d, "Properties", "DashboardName"))
			}
			if body, _ := get(d, "Properties", "DashboardBody", "Fn::Sub").(string); !json.Valid([]byte(body)) {
				t.Errorf("%s: %s's body is not JSON:\n%s", path, id, body)
			}
		}
	}
}
