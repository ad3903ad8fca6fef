package ijson_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/internal/ijson"
)

func TestCheck_names_the_value_and_the_problem(t *testing.T) {
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf(`"m%d":%d`, i, i)
	}
	for _, tc := range []struct{ name, text, path, problem string }{
		{"I-JSON", `{"a":[1,{"b":"c\u00e9\ud83d\ude00"}],"d":{"a":1},"e":"\"x\\"}`, "", ""},
		{"a member twice", `{"a":1,"b":2,"a":3}`, "a", "twice"},
		{"a member twice, escaped once", `{"a":1,"\u0061":2}`, "a", "twice"},
		{"a member twice, nested in an array", `{"lines":[{"sku":"a"},{"sku":"b","sku":"c"}]}`, "lines.1.sku", "twice"},
		{"a member twice among many", `{` + strings.Join(many, ",") + `,"m3":0}`, "m3", "twice"},
		{"one name in two objects", `{"a":{"x":1},"b":{"x":1}}`, "", ""},
		{"a value not UTF-8", "{\"a\":[\"ok\",\"\xff\"]}", "a.1", "UTF-8"},
		{"a name not UTF-8", "{\"a\":{\"\xc3\":1}}", "a", "UTF-8"},
		{"a text not UTF-8", "\"\xe2\x82\"", "", "UTF-8"},
		{"a lone high surrogate", `{"a":"x\ud800y"}`, "a", "surrogate"},
		{"a high surrogate at the end", `{"a":"x\ud800"}`, "a", "surrogate"},
		{"a lone low surrogate", `{"a":"\udc00"}`, "a", "surrogate"},
		{"two high surrogates", `["\ud800\ud800"]`, "0", "surrogate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ijson.Check([]byte(tc.text))
			var bad *ijson.Error
			switch {
			case tc.problem == "" && err != nil:
				t.Fatalf("Check = %v; want nil", err)
			case tc.problem == "":
				return
			case !errors.As(err, &bad):
				t.Fatalf("Check = %v; want an *ijson.Error", err)
			case bad.Path != tc.path || !strings.Contains(bad.Problem, tc.problem):
				t.Errorf("Check = path %q, %q; want path %q, a problem naming %q", bad.Path, bad.Problem, tc.path, tc.problem)
			}
		})
	}
}

func TestError_In_joins_where_and_path(t *testing.T) {
	for _, tc := range []struct{ where, path, want string }{
		{"", "id", "id"}, {"data", "", "data"}, {"data", "a.b", "data.a.b"}, {"", "", ""},
	} {
		if got := (&ijson.Error{Path: tc.path}).In(tc.where); got != tc.want {
			t.Errorf("In(%q) of path %q = %q; want %q", tc.where, tc.path, got, tc.want)
		}
	}
}
