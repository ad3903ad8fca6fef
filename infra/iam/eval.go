package iam

import (
	"fmt"
	"slices"
	"strings"
)

// Request is one authorisation IAM makes: an action as IAM names it (dynamodb:PutItem), the
// resource's ARN ("*" for actions on no resource), and the request's condition keys, lower-
// cased, each with its values (dynamodb:leadingkeys → the partition keys it touches).
type Request struct {
	Action   string
	Resource string
	Context  map[string][]string
}

// StatementRef names one statement of a policy.
type StatementRef struct {
	Policy    string
	Index     int
	Statement Statement
}

func (r StatementRef) String() string {
	return fmt.Sprintf("%s %s (%s)", r.Policy, StatementName(r.Index, r.Statement.Sid), r.Statement)
}

// Decision is the answer for one Request.
type Decision struct {
	Allowed bool
	// By is the statement that decided: the explicit Deny, or the Allow; nil for the implicit
	// deny (no statement allows).
	By *StatementRef
	// Closest is, for an implicit deny, the statement that came closest to allowing, and Why
	// says what of it did not match the request; nil when no statement is an Allow.
	Closest *StatementRef
	Why     string
}

// Explicit reports whether a Deny statement refused the request.
func (d Decision) Explicit() bool { return !d.Allowed && d.By != nil }

// Evaluate decides a request as IAM decides it for an identity-based policy set in one
// account: an explicit Deny refuses, else an Allow allows, else it is refused implicitly.
func Evaluate(policies []Policy, r Request) Decision {
	var allow *StatementRef
	var closest *StatementRef
	best, why := -1, ""
	for _, p := range policies {
		for i, st := range p.Statements {
			action, resource, cond := st.action(r.Action), st.resource(r.Resource), st.conditions(r.Context)
			if action && resource && cond == "" {
				ref := &StatementRef{Policy: p.Name, Index: i, Statement: st}
				if st.Effect == Deny {
					return Decision{By: ref}
				}
				if allow == nil {
					allow = ref
				}
				continue
			}
			if st.Effect != Allow {
				continue
			}
			// Closeness: the action, else one of the same service; the resource by its own
			// pattern rather than "*"; the conditions.
			score := 0
			var miss []string
			switch {
			case action:
				score += 8
			case st.sameService(r.Action):
				score += 4
				miss = append(miss, "its actions do not include "+r.Action)
			default:
				miss = append(miss, "its actions do not include "+r.Action)
			}
			switch {
			case resource && st.specific(r.Resource):
				score += 3
			case resource:
				score++
			default:
				miss = append(miss, "its resources do not match "+r.Resource)
			}
			if cond == "" {
				score++
			} else {
				miss = append(miss, cond)
			}
			if score > best {
				best, why = score, strings.Join(miss, "; ")
				closest = &StatementRef{Policy: p.Name, Index: i, Statement: st}
			}
		}
	}
	if allow != nil {
		return Decision{Allowed: true, By: allow}
	}
	return Decision{Closest: closest, Why: why}
}

func (st Statement) action(a string) bool {
	if len(st.Actions) > 0 {
		return slices.ContainsFunc(st.Actions, func(p string) bool { return actionMatches(p, a) })
	}
	return !slices.ContainsFunc(st.NotActions, func(p string) bool { return actionMatches(p, a) })
}

// sameService reports whether the statement names an action of a's service.
func (st Statement) sameService(a string) bool {
	svc, _, _ := strings.Cut(strings.ToLower(a), ":")
	return slices.ContainsFunc(st.Actions, func(p string) bool { return strings.HasPrefix(strings.ToLower(p), svc+":") })
}

// specific reports whether a resource pattern other than "*" matches r.
func (st Statement) specific(r string) bool {
	return slices.ContainsFunc(st.Resources, func(p string) bool { return p != "*" && resourceMatches(p, r) })
}

func (st Statement) resource(r string) bool {
	match := func(p string) bool { return resourceMatches(p, r) }
	if len(st.Resources) > 0 {
		return slices.ContainsFunc(st.Resources, match)
	}
	return !slices.ContainsFunc(st.NotResources, match)
}

// conditions returns "" when every condition holds, else which one does not and why.
func (st Statement) conditions(ctx map[string][]string) string {
	for _, c := range st.Conditions {
		if !c.holds(ctx) {
			vals, ok := ctx[c.Key]
			if !ok {
				return fmt.Sprintf("its condition %s fails: the request has no %s", c, c.Key)
			}
			return fmt.Sprintf("its condition %s fails for %s %v", c, c.Key, vals)
		}
	}
	return ""
}
