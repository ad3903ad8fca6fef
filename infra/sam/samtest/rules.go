package samtest

import (
	"fmt"
	"maps"
	"slices"
)

// Refusals returns what CloudFormation would answer a deploy with these parameters: the
// AssertDescription of each of the template's Rules assertions that fails, rule by rule.
// A rule applies when its RuleCondition holds, or always without one.
func (r *Resolver) Refusals() []string {
	var out []string
	rules := asMap(get(r.doc, "Rules"))
	for _, name := range slices.Sorted(maps.Keys(rules)) {
		rule := rules[name]
		if c := get(rule, "RuleCondition"); c != nil && !r.eval(c) {
			continue
		}
		for _, a := range asList(get(rule, "Assertions")) {
			if !r.eval(get(a, "Assert")) {
				out = append(out, fmt.Sprintf("%s: %v", name, get(a, "AssertDescription")))
			}
		}
	}
	return out
}

// Creates reports whether a deploy with these parameters creates the translation's resource
// id: whether its Condition holds, or always without one.
func (r *Resolver) Creates(id string) bool {
	c, ok := get(r.doc, "Resources", id, "Condition").(string)
	return !ok || r.condition(c)
}
