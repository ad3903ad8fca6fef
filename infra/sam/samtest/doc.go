package samtest

import (
	"fmt"
	"strconv"
	"strings"
)

func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(Doc)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func asMap(v any) Doc {
	m, _ := v.(Doc)
	return m
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

// num reads a number of the translation (JSON), or of a parameter (a string).
func num(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	case string:
		i, _ := strconv.Atoi(strings.TrimSpace(n)) // not a number: 0, as for any other type
		return i
	}
	return 0
}

// scalar writes a scalar as CloudFormation passes it on: JSON numbers as integers.
func scalar(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprint(v)
}

// refTarget is the logical id a {"Ref"} or {"Fn::GetAtt"} points at.
func refTarget(v any) string {
	if s, ok := get(v, "Ref").(string); ok {
		return s
	}
	if l, ok := get(v, "Fn::GetAtt").([]any); ok && len(l) > 0 {
		return fmt.Sprint(l[0])
	}
	return ""
}

func resourcesOfType(tpl Doc, typ string) map[string]Doc {
	out := map[string]Doc{}
	for id, r := range asMap(get(tpl, "Resources")) {
		if get(r, "Type") == typ {
			out[id] = r.(Doc)
		}
	}
	return out
}
