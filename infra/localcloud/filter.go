package localcloud

import (
	"encoding/json"
	"fmt"
	"strings"
)

// filter is an event source mapping's FilterCriteria: a record passes when any pattern
// matches it; no pattern passes everything. Patterns use Lambda's (EventBridge) syntax:
// nested objects, lists of exact values, and prefix, suffix, equals-ignore-case, exists,
// anything-but and numeric matchers.
type filter []map[string]any

func parseFilter(criteria any) (filter, error) {
	if criteria == nil {
		return nil, nil
	}
	var fc struct{ Filters []struct{ Pattern string } }
	if err := remarshal(criteria, &fc); err != nil {
		return nil, fmt.Errorf("FilterCriteria: %w", err)
	}
	var f filter
	for _, p := range fc.Filters {
		var pattern map[string]any
		if err := json.Unmarshal([]byte(p.Pattern), &pattern); err != nil {
			return nil, fmt.Errorf("FilterCriteria pattern %s: %w", p.Pattern, err)
		}
		f = append(f, pattern)
	}
	return f, nil
}

// match reports whether a record (any JSON-marshalable value) passes.
func (f filter) match(record any) bool {
	if len(f) == 0 {
		return true
	}
	var data any
	if err := remarshal(record, &data); err != nil {
		return false
	}
	for _, p := range f {
		if matchObject(p, data) {
			return true
		}
	}
	return false
}

func matchObject(pattern map[string]any, data any) bool {
	obj, _ := data.(map[string]any)
	for key, want := range pattern {
		val, present := obj[key]
		switch w := want.(type) {
		case map[string]any:
			if !present || !matchObject(w, val) {
				return false
			}
		case []any:
			if !matchAny(w, val, present) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func matchAny(matchers []any, val any, present bool) bool {
	for _, m := range matchers {
		if matchOne(m, val, present) {
			return true
		}
	}
	return false
}

func matchOne(m, val any, present bool) bool {
	if list, ok := val.([]any); ok { // a list value matches when any element does
		for _, v := range list {
			if matchOne(m, v, true) {
				return true
			}
		}
		return false
	}
	op, ok := m.(map[string]any)
	if !ok {
		return present && m == val
	}
	s, isString := val.(string)
	for name, arg := range op {
		switch name {
		case "exists":
			return arg == present
		case "prefix":
			p, _ := arg.(string)
			return isString && strings.HasPrefix(s, p)
		case "suffix":
			p, _ := arg.(string)
			return isString && strings.HasSuffix(s, p)
		case "equals-ignore-case":
			p, _ := arg.(string)
			return isString && strings.EqualFold(s, p)
		case "anything-but":
			if !present {
				return false
			}
			if list, ok := arg.([]any); ok {
				return !matchAny(list, val, true)
			}
			return !matchOne(arg, val, true)
		case "numeric":
			return present && matchNumeric(arg, val)
		}
	}
	return false
}

func matchNumeric(arg, val any) bool {
	n, ok := val.(float64)
	cond, _ := arg.([]any)
	if !ok {
		return false
	}
	for i := 0; i+1 < len(cond); i += 2 {
		op, _ := cond[i].(string)
		x, _ := cond[i+1].(float64)
		ok := map[string]bool{"=": n == x, "<": n < x, "<=": n <= x, ">": n > x, ">=": n >= x}[op]
		if !ok {
			return false
		}
	}
	return len(cond) > 0
}

// sqsFilterView is what SQS filters see: the record with its body parsed when it is JSON.
func sqsFilterView(rec any) any {
	var data map[string]any
	if remarshal(rec, &data) != nil {
		return rec
	}
	if body, ok := data["body"].(string); ok {
		var parsed any
		if json.Unmarshal([]byte(body), &parsed) == nil {
			data["body"] = parsed
		}
	}
	return data
}
