package localcloud

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// noValue is what !Ref AWS::NoValue resolves to: a mapping key or list item holding it is
// removed, as CloudFormation removes it.
type noValue struct{}

// conditions evaluates the template's Conditions (Fn::Equals, Fn::Not, Fn::And, Fn::Or and
// Condition) on the parameters, each once.
type conditions struct {
	decl   map[string]*yaml.Node
	values map[string]bool
	active map[string]bool // being evaluated: a condition that refers to itself is refused
}

// ifCall evaluates Fn::If [condition, then, else]: only the branch taken is resolved, so the
// other may name what has no local value.
func (r *refs) ifCall(arg *yaml.Node) (any, error) {
	if arg.Kind != yaml.SequenceNode || len(arg.Content) != 3 || arg.Content[0].Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("line %d: !If: want [condition name, value if true, value if false]", arg.Line)
	}
	ok, err := r.condition(arg.Content[0].Value)
	if err != nil {
		return nil, err
	}
	if ok {
		return r.resolve(arg.Content[1])
	}
	return r.resolve(arg.Content[2])
}

// condition is the value of the template's condition name.
func (r *refs) condition(name string) (bool, error) {
	c := &r.conds
	if v, ok := c.values[name]; ok {
		return v, nil
	}
	n, ok := c.decl[name]
	if !ok {
		return false, fmt.Errorf("condition %s is not declared in Conditions", name)
	}
	if c.active[name] {
		return false, fmt.Errorf("condition %s refers to itself", name)
	}
	if c.active == nil {
		c.active, c.values = map[string]bool{}, map[string]bool{}
	}
	c.active[name] = true
	defer delete(c.active, name)
	v, err := r.evalCondition(n)
	if err != nil {
		return false, fmt.Errorf("condition %s: %w", name, err)
	}
	c.values[name] = v
	return v, nil
}

func (r *refs) evalCondition(n *yaml.Node) (bool, error) {
	fn, arg, ok := intrinsicCall(n)
	if !ok && n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "Condition" {
		fn, arg, ok = "Condition", n.Content[1], true // the long form {Condition: name}
	}
	if !ok {
		return false, fmt.Errorf("line %d: not a condition function", n.Line)
	}
	if fn == "Condition" {
		return r.condition(arg.Value)
	}
	if arg.Kind != yaml.SequenceNode {
		return false, fmt.Errorf("line %d: Fn::%s: want a list", arg.Line, fn)
	}
	switch fn {
	case "Equals":
		if len(arg.Content) != 2 {
			return false, fmt.Errorf("line %d: Fn::Equals: want two values", arg.Line)
		}
		a, err := r.resolveString(arg.Content[0])
		if err != nil {
			return false, err
		}
		b, err := r.resolveString(arg.Content[1])
		return a == b, err
	case "Not":
		if len(arg.Content) != 1 {
			return false, fmt.Errorf("line %d: Fn::Not: want one condition", arg.Line)
		}
		v, err := r.evalCondition(arg.Content[0])
		return !v, err
	case "And", "Or":
		for _, c := range arg.Content {
			v, err := r.evalCondition(c)
			if err != nil {
				return false, err
			}
			if v == (fn == "Or") {
				return v, nil
			}
		}
		return fn == "And", nil
	}
	return false, fmt.Errorf("line %d: Fn::%s is not a condition function", arg.Line, fn)
}
