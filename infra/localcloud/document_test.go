package localcloud

import (
	"reflect"
	"testing"
)

func TestParseDocument_writes_intrinsics_in_long_form(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       any
	}{
		{"ref", "v: !Ref T", map[string]any{"Ref": "T"}},
		{"ref long", "v: {Ref: T}", map[string]any{"Ref": "T"}},
		{"getatt short", "v: !GetAtt Q.Arn", map[string]any{"Fn::GetAtt": []any{"Q", "Arn"}}},
		{"getatt list", "v: !GetAtt [T, StreamArn]", map[string]any{"Fn::GetAtt": []any{"T", "StreamArn"}}},
		{"getatt long", "v: {Fn::GetAtt: [Q, QueueName]}", map[string]any{"Fn::GetAtt": []any{"Q", "QueueName"}}},
		{"sub", `v: !Sub "${AWS::StackName}-${Q.Arn}"`, map[string]any{"Fn::Sub": "${AWS::StackName}-${Q.Arn}"}},
		{"nested", `v: !Join [":", [a, !Ref Stage, 3]]`,
			map[string]any{"Fn::Join": []any{":", []any{"a", map[string]any{"Ref": "Stage"}, 3}}}},
		{"condition", "v: !Condition IsProd", map[string]any{"Condition": "IsProd"}},
		{"unknown functions are kept", "v: !If [c, a, b]", map[string]any{"Fn::If": []any{"c", "a", "b"}}},
		{"plain values", "v: {n: 42, b: true, l: [x], s: '7'}",
			map[string]any{"n": 42, "b": true, "l": []any{"x"}, "s": "7"}},
		{"alias", "a: &x {Ref: T}\nv: *x", map[string]any{"Ref": "T"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := parseDocument([]byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(doc["v"], c.want) {
				t.Errorf("%s = %#v; want %#v", c.yaml, doc["v"], c.want)
			}
		})
	}
}

func TestParseDocument_rejects_what_is_not_a_template(t *testing.T) {
	for _, text := range []string{"- a list", "a: [unclosed", ""} {
		if doc, err := parseDocument([]byte(text)); err == nil {
			t.Errorf("parse %q = %v; want an error", text, doc)
		}
	}
}
