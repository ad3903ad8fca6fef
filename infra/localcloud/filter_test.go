package localcloud

import "testing"

func TestFilter_matches_lambda_patterns(t *testing.T) {
	outbox := map[string]any{"eventName": "INSERT", "dynamodb": map[string]any{
		"NewImage": map[string]any{"kind": map[string]any{"S": "outbox"}, "n": map[string]any{"N": "5"}}}}
	note := map[string]any{"eventName": "INSERT", "dynamodb": map[string]any{
		"NewImage": map[string]any{"kind": map[string]any{"S": "note"}}}}
	cases := []struct {
		name, pattern string
		record        any
		want          bool
	}{
		{"exact nested", `{"eventName":["INSERT"],"dynamodb":{"NewImage":{"kind":{"S":["outbox"]}}}}`, outbox, true},
		{"exact nested miss", `{"eventName":["INSERT"],"dynamodb":{"NewImage":{"kind":{"S":["outbox"]}}}}`, note, false},
		{"prefix", `{"dynamodb":{"NewImage":{"kind":{"S":[{"prefix":"out"}]}}}}`, outbox, true},
		{"anything-but", `{"eventName":[{"anything-but":["REMOVE"]}]}`, note, true},
		{"exists false", `{"dynamodb":{"OldImage":[{"exists":false}]}}`, note, true},
		{"missing key", `{"eventName":["MODIFY"]}`, note, false},
		{"numeric", `{"body":{"n":[{"numeric":[">",3]}]}}`, sqsFilterView(map[string]any{"body": `{"n":5}`}), true},
		{"numeric miss", `{"body":{"n":[{"numeric":[">",9]}]}}`, sqsFilterView(map[string]any{"body": `{"n":5}`}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := parseFilter(map[string]any{"Filters": []any{map[string]any{"Pattern": c.pattern}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.match(c.record); got != c.want {
				t.Errorf("match = %v, want %v", got, c.want)
			}
		})
	}
	if !filter(nil).match(note) {
		t.Error("no filter must pass every record")
	}
}
