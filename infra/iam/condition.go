package iam

import (
	"errors"
	"fmt"
	"slices"
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

// operator is a condition operator without set qualifier and IfExists: whether it is negated
// (a request value holds when it matches none of the policy's values) and how one request
// value matches one policy value.
type operator struct {
	negated bool
	match   func(policy, value string) bool
}

func equals(p, v string) bool { return p == v }

// operators are the condition operators evaluated here, by lower-cased name. ArnEquals takes
// wildcards as ArnLike does.
var operators = map[string]operator{
	"stringequals": {false, equals}, "stringnotequals": {true, equals},
	"stringequalsignorecase": {false, strings.EqualFold}, "stringnotequalsignorecase": {true, strings.EqualFold},
	"stringlike": {false, like}, "stringnotlike": {true, like},
	"arnequals": {false, ARNLike}, "arnlike": {false, ARNLike}, "arnnotequals": {true, ARNLike}, "arnnotlike": {true, ARNLike},
	"bool": {false, strings.EqualFold}, "null": {false, nil},
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
		if strings.HasSuffix(rest, "ifexists") {
			c.ifExists, rest = true, strings.TrimSuffix(rest, "ifexists")
		}
		if _, ok := operators[rest]; !ok || (c.ifExists && rest == "null") {
			errs = append(errs, fmt.Errorf("condition operator %s is not evaluated here (String*, Arn*, Bool and Null are, with ForAllValues:, ForAnyValue: and ...IfExists)", op))
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
	if c.base == "null" { // "true" holds without the key, "false" with it; any of the values
		goal := "true"
		if present {
			goal = "false"
		}
		return slices.ContainsFunc(c.Values, func(v string) bool { return strings.EqualFold(v, goal) })
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
		return c.ifExists || operators[c.base].negated
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
	op := operators[c.base]
	return slices.ContainsFunc(c.Values, func(p string) bool { return op.match(p, v) }) != op.negated
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
