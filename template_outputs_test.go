package onceflow_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/internal/config"
)

// The operator's tool (cmd/onceflow) finds a deployed stack's queues, tables, the relay's
// routes and the consumers' names in its outputs: they must be there, and say what the
// functions are configured with.
func TestTemplate_outputs_name_what_the_operator_tool_needs(t *testing.T) {
	tpl, err := localcloud.LoadDocument("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := func(v any, key string) map[string]any { x, _ := v.(map[string]any)[key].(map[string]any); return x }
	resources, outputs := m(tpl, "Resources"), m(tpl, "Outputs")
	value := func(key string) any { o, _ := outputs[key].(map[string]any); return o["Value"] }
	var consumers []string
	for id, r := range resources {
		want := map[string]string{"AWS::SQS::Queue": id + "Url", "AWS::DynamoDB::Table": id + "Name"}[r.(map[string]any)["Type"].(string)]
		if want != "" {
			if _, ok := outputs[want]; !ok || fmt.Sprint(value(want)) != fmt.Sprint(map[string]any{"Ref": id}) {
				t.Errorf("output %s: want !Ref %s", want, id)
			}
		}
		if name, ok := m(m(m(r, "Properties"), "Environment"), "Variables")[config.ConsumerName].(string); ok {
			consumers = append(consumers, name)
		}
	}
	if got, _ := value("ConsumerNames").(string); !slices.Equal(sorted(strings.Split(got, ",")), sorted(consumers)) {
		t.Errorf("ConsumerNames = %q; want the functions' %s values %v", got, config.ConsumerName, consumers)
	}

	relayEnv := m(m(m(resources, "OutboxRelayFunction"), "Properties"), "Environment")["Variables"].(map[string]any)
	// The relay's routes: its OUTBOX_ROUTES, which include the first consumers' variables.
	env, _ := relayEnv[config.OutboxRouteList].(map[string]any)
	envSub, _ := env["Fn::Sub"].(string)
	want := subRoutes(t, config.OutboxRouteList, envSub)
	for typ, vars := range config.OutboxRoutes {
		for _, v := range vars {
			ref, _ := relayEnv[v].(map[string]any)["Ref"].(string)
			if !slices.Contains(want[typ], ref) {
				t.Errorf("the relay's %s routes %s to %s; its %s does not", v, typ, ref, config.OutboxRouteList)
			}
		}
	}
	routes, _ := value("OutboxRoutes").(map[string]any)
	sub, _ := routes["Fn::Sub"].(string)
	if envSub != sub {
		t.Errorf("OutboxRoutes = %q; want the relay's %s, %q", sub, config.OutboxRouteList, envSub)
	}
	got := map[string][]string{}
	for _, route := range strings.Split(sub, ",") {
		typ, queue, _ := strings.Cut(route, "=")
		if q := regexp.MustCompile(`^\$\{(\w+)\}$`).FindStringSubmatch(queue); q != nil {
			got[typ] = append(got[typ], q[1])
		} else {
			t.Errorf("OutboxRoutes: route %q: want TYPE=${Queue}", route)
		}
	}
	for typ := range want {
		if !slices.Equal(sorted(got[typ]), sorted(want[typ])) {
			t.Errorf("OutboxRoutes routes %s to %v; the relay sends it to %v", typ, got[typ], want[typ])
		}
	}
	if len(got) != len(want) {
		t.Errorf("OutboxRoutes routes %d event types; the relay %d", len(got), len(want))
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
