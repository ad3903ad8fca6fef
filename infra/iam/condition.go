package iam

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Condition is one condition of a statement: an operator, a key and the policy's values. The
// key is lower-cased (IAM reads condition keys case-insensitively).
type Condition struct {
	Operator string // as written: ForAllValues:StringLike
	Key      string
	Values   []string

	set      string // "", "forallvalues" or "foranyvalue"
	base     string // the operator without set qualifier and IfExists: stringlike
	ifExists bool
}

// operators are the condition operators evaluated here, lower-cased, each with whether it is
// negated (true when a request value matches none of the policy's values).
var operators = map[string]bool{
	"stringequals": false, "stringnotequals": true, "stringequalsignorecase": false, "stringnotequalsignorecase": true,
	"stringlike": false, "stringnotlike": true, "arnequals": false, "arnlike": false, "arnnotequals": true,
	"arnnotlike": true, "bool": false, "null": false,
}

func parseConditions(v any) ([]Condition, error) {
	block, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("Condition is %T, want an object", v)
	}
	var out []Condition
	var errs []error
	for _, op := range sortedKeys(block) {
		keys, ok := block[op].(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("condition %s: want an object of keys", op))
			continue
		}
		c := Condition{Operator: op}
		rest := strings.ToLower(op)
		if set, base, ok := strings.Cut(rest, ":"); ok {
			c.set, rest = set, base
			if set != "forallvalues" && set != "foranyvalue" {
				errs = append(errs, fmt.Errorf("condition %s: set operator %s, want ForAllValues or ForAnyValue", op, set))
				continue
			}
		}
		if strings.HasSuffix(rest, "ifexists") && rest != "null" {
			c.ifExists, rest = true, strings.TrimSuffix(rest, "ifexists")
		}
		if _, ok := operators[rest]; !ok {
			errs = append(errs, fmt.Errorf("condition operator %s is not evaluated here", op))
			continue
		}
		c.base = rest
		for _, key := range sortedKeys(keys) {
			vals, err := stringList(keys[key])
			if err != nil {
				errs = append(errs, fmt.Errorf("condition %s %s: %w", op, key, err))
				continue
			}
			k := c
			k.Key, k.Values = strings.ToLower(key), vals
			out = append(out, k)
		}
	}
	return out, errors.Join(errs...)
}

// String writes the condition as a policy writes it.
func (c Condition) String() string {
	return fmt.Sprintf("%s %s %v", c.Operator, c.Key, c.Values)
}

// holds reports whether the condition holds for the request's context (condition key →
// values; a key absent from it is absent from the request).
func (c Condition) holds(ctx map[string][]string) bool {
	vals, present := ctx[c.Key]
	if c.base == "null" {
		want := len(c.Values) > 0 && strings.EqualFold(c.Values[0], "true")
		return want == !present
	}
	switch c.set {
	case "forallvalues": // every value the request has matches; vacuously true without any
		for _, v := range vals {
			if !c.matches(v) {
				return false
			}
		}
		return true
	case "foranyvalue":
		for _, v := range vals {
			if c.matches(v) {
				return true
			}
		}
		return false
	}
	if !present {
		// A missing key matches nothing: a positive operator fails, a negated one holds.
		return c.ifExists || operators[c.base]
	}
	if multivaluedKeys[c.Key] {
		// A multivalued key needs a set operator: without one, no value of it matches, whatever
		// the operator says (a negated one included).
		return false
	}
	for _, v := range vals {
		if c.matches(v) {
			return true
		}
	}
	return false
}

// matches reports whether one request value satisfies the operator against the policy's values.
func (c Condition) matches(v string) bool {
	hit := false
	for _, p := range c.Values {
		var ok bool
		switch c.base {
		case "stringequals", "stringnotequals":
			ok = v == p
		case "stringequalsignorecase", "stringnotequalsignorecase", "bool":
			ok = strings.EqualFold(v, p)
		case "stringlike", "stringnotlike":
			ok = like(p, v)
		case "arnequals", "arnnotequals", "arnlike", "arnnotlike": // ArnEquals takes wildcards as ArnLike does
			ok = ARNLike(p, v)
		}
		if ok {
			hit = true
			break
		}
	}
	return hit != operators[c.base]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
