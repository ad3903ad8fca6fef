package iam

import (
	"errors"
	"fmt"
	"strings"
)

// Effect is a statement's Effect.
type Effect string

// The two effects of a statement.
const (
	Allow Effect = "Allow"
	Deny  Effect = "Deny"
)

// Statement is one statement of a policy, its values resolved: strings only, no intrinsic
// functions. Exactly one of Actions and NotActions is set, and one of Resources and
// NotResources.
type Statement struct {
	Sid          string
	Effect       Effect
	Actions      []string
	NotActions   []string
	Resources    []string
	NotResources []string
	Conditions   []Condition
}

// Policy is a named policy document: the name says where it comes from (an inline policy's
// PolicyName, an AWS managed policy's ARN, a template's managed policy by logical id).
type Policy struct {
	Name       string
	Statements []Statement
	// Document is the document ParsePolicy read, as it was given: what another evaluator is
	// handed to decide the same requests.
	Document any
}

// ParsePolicy reads a policy document (a JSON-shaped value: {"Version": ..., "Statement": [...]})
// whose values are resolved. It refuses what IAM would refuse in an identity-based policy and
// what this package cannot evaluate as AWS does (an unknown condition operator, a policy
// variable, an ARN whose wildcards AWS reads otherwise), naming the statement (its index, and
// its Sid) and the element, so that a policy is never evaluated as something it does not say.
func ParsePolicy(name string, document any) (Policy, error) {
	doc, ok := document.(map[string]any)
	if !ok {
		return Policy{}, fmt.Errorf("policy %s: the document is %T, want an object", name, document)
	}
	p := Policy{Name: name, Document: document}
	var errs []error
	for k := range doc {
		if k != "Version" && k != "Statement" && k != "Id" {
			errs = append(errs, fmt.Errorf("unknown key %s", k))
		}
	}
	for i, raw := range list(doc["Statement"]) {
		st, err := parseStatement(raw)
		if err == nil {
			err = errors.Join(unevaluable(st)...)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", statementName(i, raw), err))
			continue
		}
		p.Statements = append(p.Statements, st)
	}
	if len(p.Statements) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no statement"))
	}
	if err := errors.Join(errs...); err != nil {
		return Policy{}, fmt.Errorf("policy %s: %w", name, err)
	}
	return p, nil
}

// statementName names statement i of a policy as an error about it does: by index, and by Sid
// when it has one.
func statementName(i int, raw any) string {
	sid, _ := get(raw, "Sid").(string)
	return StatementName(i, sid)
}

// StatementName names the statement of index i and Sid sid ("" for none) as errors and logs
// about it do: "statement 2", "statement 2 (Sid ReadOwnItems)".
func StatementName(i int, sid string) string {
	if sid != "" {
		return fmt.Sprintf("statement %d (Sid %s)", i, sid)
	}
	return fmt.Sprintf("statement %d", i)
}

func get(v any, key string) any {
	if m, ok := v.(map[string]any); ok {
		return m[key]
	}
	return nil
}

func parseStatement(raw any) (Statement, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return Statement{}, fmt.Errorf("a statement is %T, want an object", raw)
	}
	var st Statement
	var errs []error
	strs := func(key string) []string {
		out, err := stringList(m[key])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
		return out
	}
	for k := range m {
		switch k {
		case "Sid", "Effect", "Action", "NotAction", "Resource", "NotResource", "Condition":
		default:
			errs = append(errs, fmt.Errorf("key %s is not one of an identity-based policy's statement", k))
		}
	}
	st.Sid, _ = m["Sid"].(string)
	st.Effect = Effect(fmt.Sprint(m["Effect"]))
	if st.Effect != Allow && st.Effect != Deny {
		errs = append(errs, fmt.Errorf("Effect %v, want Allow or Deny", m["Effect"]))
	}
	st.Actions, st.NotActions = strs("Action"), strs("NotAction")
	st.Resources, st.NotResources = strs("Resource"), strs("NotResource")
	if (len(st.Actions) == 0) == (len(st.NotActions) == 0) {
		errs = append(errs, errors.New("want exactly one of Action and NotAction"))
	}
	if (len(st.Resources) == 0) == (len(st.NotResources) == 0) {
		errs = append(errs, errors.New("want exactly one of Resource and NotResource"))
	}
	if c, ok := m["Condition"]; ok {
		conds, err := parseConditions(c)
		if err != nil {
			errs = append(errs, err)
		}
		st.Conditions = conds
	}
	return st, errors.Join(errs...)
}

// String writes a statement in a line: its effect, actions, resources and conditions.
func (st Statement) String() string {
	var b strings.Builder
	b.WriteString(string(st.Effect))
	if len(st.Actions) > 0 {
		fmt.Fprintf(&b, " %s", strings.Join(st.Actions, ","))
	} else {
		fmt.Fprintf(&b, " NotAction %s", strings.Join(st.NotActions, ","))
	}
	if len(st.Resources) > 0 {
		fmt.Fprintf(&b, " on %s", strings.Join(st.Resources, ","))
	} else {
		fmt.Fprintf(&b, " on NotResource %s", strings.Join(st.NotResources, ","))
	}
	for _, c := range st.Conditions {
		fmt.Fprintf(&b, " if %s", c)
	}
	return b.String()
}

// list is a value that may be one item or a list of them, as a list.
func list(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	}
	return []any{v}
}

// stringList reads a string or a list of strings; numbers and booleans are written as IAM reads
// them.
func stringList(v any) ([]string, error) {
	var out []string
	for _, x := range list(v) {
		switch s := x.(type) {
		case string:
			out = append(out, s)
		case bool, int, int64, float64:
			out = append(out, fmt.Sprint(s))
		default:
			return nil, fmt.Errorf("%v is %T, want a string (is an intrinsic function left unresolved?)", x, x)
		}
	}
	return out, nil
}
