package localcloud

import (
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
)

func testRefs() *refs {
	return &refs{
		params: map[string]string{"Stage": "dev"},
		tables: map[string]Table{"T": {Name: "p-T", ARN: "arn:table/p-T", StreamARN: "arn:table/p-T/stream/1"}},
		queues: map[string]Queue{"Q": {Name: "p-Q.fifo", URL: "http://q/p-Q.fifo", ARN: "arn:sqs:p-Q.fifo"}},
		prefix: "p", region: Region, account: Account,
	}
}

func node(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

func TestResolve_intrinsics_in_short_and_long_form(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"ref table", "!Ref T", "p-T"},
		{"ref queue", "!Ref Q", "http://q/p-Q.fifo"},
		{"ref parameter", "{Ref: Stage}", "dev"},
		{"ref pseudo", "!Ref AWS::Region", "us-east-1"},
		{"getatt short", "!GetAtt Q.Arn", "arn:sqs:p-Q.fifo"},
		{"getatt list", "!GetAtt [T, StreamArn]", "arn:table/p-T/stream/1"},
		{"getatt long", "{Fn::GetAtt: [Q, QueueName]}", "p-Q.fifo"},
		{"sub", `!Sub "${AWS::StackName}-${Stage}-${T}-${Q.Arn}-${!Literal}"`, "p-dev-p-T-arn:sqs:p-Q.fifo-${Literal}"},
		{"sub with variables", `!Sub ["${A}/${Stage}", {A: !Ref T}]`, "p-T/dev"},
		{"sub long", `{Fn::Sub: "x-${Stage}"}`, "x-dev"},
		{"join", `!Join [":", [a, !Ref Stage, 3]]`, "a:dev:3"},
		{"select", `!Select [1, [a, b]]`, "b"},
		{"plain number", "42", "42"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := testRefs().resolveString(node(t, c.yaml))
			if err != nil || got != c.want {
				t.Errorf("resolve %s = %q, %v; want %q", c.yaml, got, err, c.want)
			}
		})
	}
}

func TestResolve_unknown_references_are_errors(t *testing.T) {
	for _, text := range []string{"!Ref Nope", "!GetAtt Q.Nope", "!GetAtt Nope.Arn", `!Sub "${Nope}"`, "!If [c, a, b]"} {
		if v, err := testRefs().resolve(node(t, text)); err == nil {
			t.Errorf("resolve %s = %v, want an error", text, v)
		}
	}
}

func TestParseTemplate_applies_globals_and_orders_dead_letter_queues_first(t *testing.T) {
	tmpl, err := ParseTemplate([]byte(`
Globals:
  Function:
    Timeout: 9
    MemorySize: 512
    Environment:
      Variables: {A: global, B: global}
Resources:
  Main:
    Type: AWS::SQS::Queue
    Properties:
      RedrivePolicy: {deadLetterTargetArn: !GetAtt Dead.Arn, maxReceiveCount: 3}
  Dead:
    Type: AWS::SQS::Queue
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 2
      Environment:
        Variables: {B: own, C: !Ref Main}
`))
	if err != nil {
		t.Fatal(err)
	}
	order, err := queueOrder(tmpl)
	if err != nil || !reflect.DeepEqual(order, []string{"Dead", "Main"}) {
		t.Errorf("queue order = %v, %v; want [Dead Main]", order, err)
	}
	r := testRefs()
	r.queues["Main"] = Queue{URL: "url-main"}
	got, err := r.resolve(tmpl.Properties["Fn"])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"Timeout": 2, "MemorySize": 512, "Environment": map[string]any{
		"Variables": map[string]any{"A": "global", "B": "own", "C": "url-main"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("function properties = %#v\nwant %#v", got, want)
	}
}

func TestParameters_overrides_replace_defaults_and_add_parameters_without_one(t *testing.T) {
	defaults := map[string]string{"Stage": "dev", "LogLevel": "info"}
	got := parameters(defaults, map[string]string{"LogLevel": "debug", "WebhookUrl": "http://127.0.0.1:1/hook"})
	want := map[string]string{"Stage": "dev", "LogLevel": "debug", "WebhookUrl": "http://127.0.0.1:1/hook"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parameters = %v, want %v", got, want)
	}
	if defaults["LogLevel"] != "info" {
		t.Error("parameters changed the template's defaults")
	}
}
