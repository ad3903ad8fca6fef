package samtest

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// Resolver resolves a translation's intrinsic functions the way the local cloud does:
// references to the local resources, parameters to their defaults and overrides, pseudo
// parameters to the local identity, conditions evaluated. What it cannot resolve fails the test.
type Resolver struct {
	t      testing.TB
	doc    Doc
	params map[string]string
	local  localcloud.Endpoints
}

// NewResolver resolves in translation tpl against the local cloud's endpoints (the zero value
// when nothing refers to a resource), with parameter overrides.
func NewResolver(t testing.TB, tpl Doc, local localcloud.Endpoints, overrides map[string]string) *Resolver {
	params := map[string]string{"AWS::Region": localcloud.Region, "AWS::AccountId": localcloud.Account, "AWS::Partition": "aws",
		"AWS::URLSuffix": "amazonaws.com"}
	for name, p := range asMap(get(tpl, "Parameters")) {
		if d := get(p, "Default"); d != nil {
			params[name] = scalar(d)
		}
	}
	maps.Copy(params, overrides)
	return &Resolver{t: t, doc: tpl, params: params, local: local}
}

// On returns the resolver reporting to test t.
func (r Resolver) On(t testing.TB) *Resolver {
	r.t = t
	return &r
}

// noValue is AWS::NoValue: a key or an item resolving to it is removed.
type noValue struct{}

// Resolve returns v with its intrinsic functions evaluated.
func (r *Resolver) Resolve(v any) any {
	switch x := v.(type) {
	case Doc:
		if len(x) == 1 {
			for fn, arg := range x {
				if v, ok := r.call(fn, arg); ok {
					return v
				}
			}
		}
		out := Doc{}
		for k, c := range x {
			if v := r.Resolve(c); v != (noValue{}) {
				out[k] = v
			}
		}
		return out
	case []any:
		var out []any
		for _, c := range x {
			if v := r.Resolve(c); v != (noValue{}) {
				out = append(out, v)
			}
		}
		return out
	}
	return v
}

func (r *Resolver) call(fn string, arg any) (any, bool) {
	switch fn {
	case "Ref":
		return r.ref(fmt.Sprint(arg)), true
	case "Fn::GetAtt":
		l := asList(arg)
		return r.getAtt(fmt.Sprint(l[0]), fmt.Sprint(l[1])), true
	case "Fn::Sub":
		s, ok := arg.(string)
		if !ok {
			r.t.Fatalf("Fn::Sub %v: only the string form is resolved here", arg)
		}
		return r.sub(s), true
	case "Fn::If":
		l := asList(arg)
		if r.condition(fmt.Sprint(l[0])) {
			return r.Resolve(l[1]), true
		}
		return r.Resolve(l[2]), true
	}
	return nil, false
}

var subVar = regexp.MustCompile(`\$\{([^!}][^}]*)\}`)

func (r *Resolver) sub(s string) string {
	return subVar.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		if res, attr, ok := strings.Cut(name, "."); ok {
			return r.getAtt(res, attr)
		}
		return scalar(r.ref(name))
	})
}

func (r *Resolver) ref(name string) any {
	if name == "AWS::NoValue" {
		return noValue{}
	}
	if v, ok := r.params[name]; ok {
		return v
	}
	if tb, ok := r.local.Tables[name]; ok {
		return tb.Name
	}
	if q, ok := r.local.Queues[name]; ok {
		return q.URL
	}
	if b, ok := r.local.Buckets[name]; ok {
		return b.Name
	}
	if get(r.doc, "Resources", name, "Type") == "AWS::Lambda::Function" {
		return name // the local Lambda API names functions by logical id
	}
	r.t.Fatalf("!Ref %s: nothing of the local cloud to compare it with", name)
	return nil
}

func (r *Resolver) getAtt(name, attr string) string {
	if q, ok := r.local.Queues[name]; ok && attr == "Arn" {
		return q.ARN
	}
	if tb, ok := r.local.Tables[name]; ok {
		switch attr {
		case "Arn":
			return tb.ARN
		case "StreamArn":
			return tb.StreamARN
		}
	}
	if b, ok := r.local.Buckets[name]; ok && attr == "Arn" {
		return b.ARN
	}
	r.t.Fatalf("!GetAtt %s.%s: nothing of the local cloud to compare it with", name, attr)
	return ""
}

// condition evaluates a condition of the template (Fn::Equals, Fn::Not, Fn::And, Fn::Or,
// Condition).
func (r *Resolver) condition(name string) bool {
	c := get(r.doc, "Conditions", name)
	if c == nil {
		r.t.Fatalf("condition %s is not declared", name)
	}
	return r.eval(c)
}

func (r *Resolver) eval(c any) bool {
	for fn, arg := range asMap(c) {
		l := asList(arg)
		switch fn {
		case "Condition":
			return r.condition(fmt.Sprint(arg))
		case "Fn::Equals":
			return scalar(r.Resolve(l[0])) == scalar(r.Resolve(l[1]))
		case "Fn::Not":
			return !r.eval(l[0])
		case "Fn::And":
			return !slices.ContainsFunc(l, func(c any) bool { return !r.eval(c) })
		case "Fn::Or":
			return slices.ContainsFunc(l, r.eval)
		}
	}
	r.t.Fatalf("condition %v: not a condition function", c)
	return false
}
