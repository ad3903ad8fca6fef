package onceflow_test

import (
	"os"
	"path/filepath"
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
