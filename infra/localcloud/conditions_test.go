package localcloud

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func conditionRefs(t *testing.T, params map[string]string) *refs {
	r := testRefs()
	r.params = params
	r.conds = conditions{decl: map[string]*yaml.Node{
		"Provisioned": node(t, `!Not [!Equals [!Ref Min, "0"]]`),
		"Both":        node(t, `!And [!Condition Provisioned, {Condition: Named}]`),
		"Either":      node(t, `{Fn::Or: [!Condition Provisioned, !Condition Named]}`),
		"Named":       node(t, `!Not [!Equals [!Ref Name, ""]]`),
		"Loop":        node(t, `!Not [!Condition Loop]`),
	}}
	return r
}

func TestResolve_If_takes_the_branch_its_condition_names_and_NoValue_removes_the_key(t *testing.T) {
	const props = `
ScalingConfig: !If [Provisioned, !Ref AWS::NoValue, {MaximumConcurrency: 5}]
ProvisionedPollerConfig: !If [Provisioned, {MinimumPollers: !Ref Min}, !Ref AWS::NoValue]
List: [a, !If [Both, b, !Ref AWS::NoValue], !If [Either, c, d], {Fn::If: [Named, !GetAtt Missing.Arn, e]}]`
	cases := []struct {
		name   string
		params map[string]string
		want   map[string]any
	}{
		{"on demand", map[string]string{"Min": "0", "Name": ""}, map[string]any{
			"ScalingConfig": map[string]any{"MaximumConcurrency": 5}, "List": []any{"a", "d", "e"}}},
		{"provisioned", map[string]string{"Min": "2", "Name": ""}, map[string]any{
			"ProvisionedPollerConfig": map[string]any{"MinimumPollers": "2"}, "List": []any{"a", "c", "e"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := conditionRefs(t, c.params).resolve(node(t, props))
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("resolve = %#v, %v; want %#v", got, err, c.want)
			}
		})
	}
}

func TestResolve_If_refuses_what_CloudFormation_refuses(t *testing.T) {
	for yaml, want := range map[string]string{
		`!If [Undeclared, a, b]`:              "condition Undeclared is not declared",
		`!If [Loop, a, b]`:                    "refers to itself",
		`!If [Provisioned, a]`:                "want [condition name, value if true, value if false]",
		`!If [Named, !GetAtt Missing.Arn, b]`: "!GetAtt Missing.Arn", // the branch taken must resolve
	} {
		_, err := conditionRefs(t, map[string]string{"Min": "0", "Name": "x"}).resolve(node(t, yaml))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resolve %s: %v; want an error saying %q", yaml, err, want)
		}
	}
}

func TestCheckPollers_refuses_what_Lambda_refuses(t *testing.T) {
	cases := []struct {
		name                 string
		typ                  string
		maxConcurrency, a, b int
		want                 string
	}{
		{"provisioned", EventSQS, 0, 2, 10, ""},
		{"with MaximumConcurrency", EventSQS, 5, 2, 10, "cannot be combined with ScalingConfig.MaximumConcurrency"},
		{"on a stream", EventDynamoDB, 0, 2, 10, "SQS event sources only"},
		{"one poller", EventSQS, 0, 1, 10, "MinimumPollers 1"},
		{"maximum below minimum", EventSQS, 0, 10, 5, "MaximumPollers 5"},
		{"too many", EventSQS, 0, 2, 2001, "MaximumPollers 2001"},
	}
	for _, c := range cases {
		err := checkPollers(c.typ, c.maxConcurrency, c.a, c.b)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	if n := pollerConcurrency(Event{MaxPollers: 2}, 40); n != 2*invokesPerPoller {
		t.Errorf("2 provisioned pollers run %d invocations at once of 40 environments; want %d", n, 2*invokesPerPoller)
	}
	if n := pollerConcurrency(Event{MaxConcurrency: 5}, 2); n != 2 {
		t.Errorf("MaximumConcurrency 5 over 2 environments runs %d at once; want 2", n)
	}
}
