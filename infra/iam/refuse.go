package iam

import (
	"fmt"
	"strings"
)

// unevaluable returns what of a statement the evaluator cannot evaluate as AWS does, each
// naming its element: a policy variable (${...}), an action or resource ARN with a wildcard in
// its service, a resource ARN with one in its resource type, an ARN a Resource or an Arn
// condition leaves short (fewer than six colon-separated parts) without a * that stands for
// the rest. Such a statement is refused, never evaluated by approximation.
func unevaluable(st Statement) []error {
	var errs []error
	for _, e := range []struct {
		name string
		vals []string
	}{{"Action", st.Actions}, {"NotAction", st.NotActions}} {
		for _, a := range e.vals {
			if svc, _, _ := strings.Cut(a, ":"); a != "*" && strings.ContainsAny(svc, "*?") {
				errs = append(errs, fmt.Errorf("%s %q: a wildcard in the service prefix, which IAM does not accept", e.name, a))
			}
			errs = appendVariable(errs, e.name, a)
		}
	}
	for _, e := range []struct {
		name string
		vals []string
	}{{"Resource", st.Resources}, {"NotResource", st.NotResources}} {
		for _, r := range e.vals {
			if err := resourcePattern(r); err != nil {
				errs = append(errs, fmt.Errorf("%s %q: %w", e.name, r, err))
			}
			errs = appendVariable(errs, e.name, r)
		}
	}
	for _, c := range st.Conditions {
		for _, v := range c.Values {
			errs = appendVariable(errs, "Condition "+c.Operator+" "+c.Key, v)
			if strings.HasPrefix(c.base, "arn") {
				if _, ok := arnComponents(v); !ok {
					errs = append(errs, fmt.Errorf("Condition %s %s %q: not a whole ARN (fewer than six colon-separated parts), which %s never matches",
						c.Operator, c.Key, v, c.Operator))
				}
			}
		}
	}
	return errs
}

func appendVariable(errs []error, element, v string) []error {
	if i := strings.Index(v, "${"); i >= 0 {
		return append(errs, fmt.Errorf("%s %q: the policy variable %s is not evaluated here", element, v, v[i:]))
	}
	return errs
}

// resourcePattern says why an ARN pattern of a Resource element is not matched here as AWS
// matches it, nil when it is.
func resourcePattern(p string) error {
	if p == "*" || !strings.HasPrefix(p, "arn:") {
		return nil
	}
	c := strings.SplitN(p, ":", 6)
	if len(c) < 6 && !strings.HasSuffix(p, "*") {
		return fmt.Errorf("not a whole ARN (%d of its 6 colon-separated parts, and no * after the last)", len(c))
	}
	if len(c) > 2 && strings.ContainsAny(c[2], "*?") {
		return fmt.Errorf("a wildcard in the service, which IAM does not accept")
	}
	if len(c) < 6 || (c[2] == "s3" && c[3] == "" && c[4] == "") {
		return nil
	}
	if i := strings.IndexAny(c[5], "/:"); i >= 0 && strings.ContainsAny(c[5][:i], "*?") {
		return fmt.Errorf("a wildcard in the resource type (%s), which IAM does not match", c[5][:i])
	}
	return nil
}
