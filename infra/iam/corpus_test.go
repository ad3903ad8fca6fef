package iam_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/infra/iam"
	"github.com/onceflow/onceflow/infra/localcloud"
)

// corpusTemplates are the SAM templates whose policies the conformance suite decides, as the
// local cloud derives them (localcloud.Principals): a line each. A project `onceflow init`
// generates joins with a function that writes one and returns its path.
var corpusTemplates = []func(t *testing.T) string{
	file("../../template.yaml"),
}

func file(path string) func(*testing.T) string { return func(*testing.T) string { return path } }

const (
	account = "000000000000"
	region  = "us-east-1"
)

// gate is the gatekeeper whose request context (the global condition keys) the cases carry.
var gate = func() *gatekeeper.Gatekeeper {
	g, err := gatekeeper.New(gatekeeper.Config{Region: region, Account: account})
	if err != nil {
		panic(err)
	}
	return g
}()

// templateCases are the requests of every principal each corpus template derives, decided on
// its own policies ("template"), and on them with one statement mutated: an action, a
// resource, a condition key or an operator changed, or the effect turned ("mutation ...").
func templateCases(t *testing.T) []simCase {
	t.Helper()
	var out []simCase
	for _, tpl := range corpusTemplates {
		path := tpl(t)
		ps, err := localcloud.Principals(localcloud.Config{Template: path})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		u := newUniverse(ps)
		for i := range ps {
			p := &ps[i]
			for _, q := range u.requests(p, p.Policies) {
				out = append(out, newCase("template", path+" "+p.Name, p.ARN, p.Policies, q.Action, q.Resource, gate.Context(p, q.Context)))
			}
			out = append(out, u.mutations(t, path, p)...)
		}
	}
	return out
}

// universe is what a template's requests are made of: concrete resources by type (each named
// by a policy, and variants in another account, region or name), and the values of the
// condition keys the policies test (each pattern made concrete, and a value none matches).
type universe struct {
	resources map[string][]string // "dynamodb:table" → ARNs
	leading   []string            // dynamodb:LeadingKeys values
	prefixes  []string            // s3:prefix values
}

func newUniverse(ps []gatekeeper.Principal) *universe {
	u := &universe{resources: map[string][]string{}}
	add := func(arn string) {
		if typ := resourceType(arn); typ != "" && !slices.Contains(u.resources[typ], arn) {
			u.resources[typ] = append(u.resources[typ], arn)
		}
	}
	for _, p := range ps {
		for _, pol := range p.Policies {
			for _, st := range pol.Statements {
				for _, r := range append(slices.Clone(st.Resources), st.NotResources...) {
					arn := concrete(r)
					add(arn)
					for _, v := range variants(arn) {
						add(v)
					}
				}
				for _, c := range st.Conditions {
					for _, v := range c.Values {
						switch c.Key {
						case "dynamodb:leadingkeys":
							u.leading = appendNew(u.leading, concrete(v))
						case "s3:prefix":
							u.prefixes = appendNew(u.prefixes, concrete(v))
						}
					}
				}
			}
		}
	}
	u.leading = appendNew(u.leading, "other#x")
	u.prefixes = appendNew(u.prefixes, "other/")
	return u
}

func appendNew(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// concrete makes a pattern a value it matches: each * an x, each ? a y, an ARN left short
// completed.
func concrete(pattern string) string {
	s := strings.NewReplacer("*", "x", "?", "y").Replace(pattern)
	if strings.HasPrefix(s, "arn:") {
		for strings.Count(s, ":") < 5 {
			s += ":x"
		}
	}
	return s
}

// variants are ARNs near arn that a policy naming arn must tell apart: another account,
// another region, another name.
func variants(arn string) []string {
	c := strings.SplitN(arn, ":", 6)
	if len(c) < 6 || arn == "*" {
		return nil
	}
	with := func(i int, v string) string {
		d := slices.Clone(c)
		d[i] = v
		return strings.Join(d, ":")
	}
	out := []string{with(5, c[5]+"-other")}
	if c[4] != "" {
		out = append(out, with(4, "111111111111"))
	}
	if c[3] != "" {
		out = append(out, with(3, "eu-west-1"))
	}
	if i := strings.Index(c[5], "/"); i >= 0 && c[2] == "dynamodb" { // the table's index and stream
		table := c[5]
		if j := strings.Index(table[i+1:], "/"); j >= 0 {
			table = table[:i+1+j]
		}
		out = append(out, with(5, table+"/index/byOther"), with(5, table+"/stream/1970-01-01T00:00:00.000"))
	}
	return out
}

// resourceTypes say which resource type an ARN is of, as the service authorization reference
// names it (with its service).
var resourceTypes = []struct {
	typ string
	re  *regexp.Regexp
}{
	{"dynamodb:index", regexp.MustCompile(`^arn:aws:dynamodb:[^:]*:[^:]*:table/[^/]+/index/[^/]+$`)},
	{"dynamodb:stream", regexp.MustCompile(`^arn:aws:dynamodb:[^:]*:[^:]*:table/[^/]+/stream/.+$`)},
	{"dynamodb:table", regexp.MustCompile(`^arn:aws:dynamodb:[^:]*:[^:]*:table/[^/]+$`)},
	{"sqs:queue", regexp.MustCompile(`^arn:aws:sqs:[^:]*:[^:]*:[^:/]+$`)},
	{"s3:object", regexp.MustCompile(`^arn:aws:s3:::[^/]+/.+$`)},
	{"s3:bucket", regexp.MustCompile(`^arn:aws:s3:::[^/]+$`)},
	{"kinesis:consumer", regexp.MustCompile(`^arn:aws:kinesis:[^:]*:[^:]*:stream/[^/]+/consumer/.+$`)},
	{"kinesis:stream", regexp.MustCompile(`^arn:aws:kinesis:[^:]*:[^:]*:stream/[^/]+$`)},
	{"ssm:parameter", regexp.MustCompile(`^arn:aws:ssm:[^:]*:[^:]*:parameter/.+$`)},
}

func resourceType(arn string) string {
	for _, rt := range resourceTypes {
		if rt.re.MatchString(arn) {
			return rt.typ
		}
	}
	return ""
}

// maxPerAction bounds the resources a request of one action is made on, and maxValues the
// values of a condition key it carries: enough to tell every pattern of a template apart.
const (
	maxPerAction = 10
	maxValues    = 4
)

// requests are the requests to decide for principal p with policies: every action they name
// (patterns against the gatekeeper's actions) and one more of each service they name, on each
// resource of the action's types, with each set of condition key values.
func (u *universe) requests(p *gatekeeper.Principal, policies []iam.Policy) []iam.Request {
	var out []iam.Request
	for _, action := range actionsOf(policies) {
		a, _ := gatekeeper.LookupAction(action)
		svc, _, _ := strings.Cut(action, ":")
		resources := []string{"*"}
		if len(a.Resources) > 0 {
			resources = nil
			for _, rt := range a.Resources {
				resources = append(resources, u.resources[svc+":"+strings.TrimSuffix(rt, "*")]...)
			}
		}
		if len(resources) > maxPerAction {
			resources = resources[:maxPerAction]
		}
		for _, r := range resources {
			for _, ctx := range u.contexts(a) {
				out = append(out, iam.Request{Action: action, Resource: r, Context: ctx})
			}
		}
	}
	return out
}

// actionsOf are the gatekeeper's actions the policies name, and for each service they name one
// they do not.
func actionsOf(policies []iam.Policy) []string {
	var named, services []string
	for _, pol := range policies {
		for _, st := range pol.Statements {
			for _, pat := range append(slices.Clone(st.Actions), st.NotActions...) {
				for _, a := range gatekeeper.ActionNames() {
					if iam.Like(strings.ToLower(pat), strings.ToLower(a)) {
						named = appendNew(named, a)
					}
				}
				if svc, _, ok := strings.Cut(pat, ":"); ok {
					services = appendNew(services, strings.ToLower(svc))
				}
			}
		}
	}
	out := slices.Clone(named)
	for _, svc := range services {
		for _, a := range gatekeeper.ActionNames() {
			if strings.HasPrefix(a, svc+":") && !slices.Contains(named, a) {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// contexts are the sets of condition key values a request of action a is decided with: one per
// value of its keys, and two values together for a multivalued one.
func (u *universe) contexts(a gatekeeper.Action) []map[string][]string {
	switch {
	case a.Has("dynamodb:LeadingKeys"):
		vals := u.leading
		if len(vals) > maxValues {
			vals = append(slices.Clone(vals[:maxValues-1]), vals[len(vals)-1])
		}
		var out []map[string][]string
		for _, v := range vals {
			out = append(out, map[string][]string{"dynamodb:leadingkeys": {v}})
		}
		return append(out, map[string][]string{"dynamodb:leadingkeys": {vals[0], vals[len(vals)-1]}})
	case a.Has("s3:prefix"):
		out := []map[string][]string{{}}
		for _, v := range u.prefixes {
			out = append(out, map[string][]string{"s3:prefix": {v}})
		}
		return out
	}
	return []map[string][]string{nil}
}

// mutations decide principal p's requests with one statement of the template's own policies
// changed, each way mutate changes one: the requests of the statement's actions, on the
// resources it names and their variants (the AWS managed policies are not a team's to edit).
func (u *universe) mutations(t *testing.T, tpl string, p *gatekeeper.Principal) []simCase {
	var out []simCase
	for pi, pol := range p.Policies {
		if strings.HasPrefix(pol.Name, "arn:aws:iam::aws:policy/") {
			continue
		}
		raw, _ := pol.Document.(map[string]any)
		sts, _ := raw["Statement"].([]any)
		for si := range sts {
			for _, m := range mutate(sts[si], u) {
				doc := iam.DeepCopy(raw).(map[string]any)
				doc["Statement"].([]any)[si] = m.statement
				mutated, err := iam.ParsePolicy(pol.Name, doc)
				if err != nil {
					t.Fatalf("%s %s: %s %s: %v", tpl, p.Name, pol.Name, m.what, err)
				}
				policies := slices.Clone(p.Policies)
				policies[pi] = mutated
				for _, q := range u.sample(mutated.Statements[si]) {
					out = append(out, newCase("mutation "+m.kind, fmt.Sprintf("%s %s %s statement %d %s", tpl, p.Name, pol.Name, si, m.what),
						p.ARN, policies, q.Action, q.Resource, gate.Context(p, q.Context)))
				}
			}
		}
	}
	return out
}

// sample are a few requests of a statement: of its first actions, on the resources it names
// and one variant of each, with the first and the last values of the condition keys.
func (u *universe) sample(st iam.Statement) []iam.Request {
	const actions, resources = 2, 3
	var out []iam.Request
	acts := actionsOf([]iam.Policy{{Statements: []iam.Statement{st}}})
	for _, action := range acts[:min(actions, len(acts))] {
		a, _ := gatekeeper.LookupAction(action)
		rs := []string{"*"}
		if len(a.Resources) > 0 {
			rs = nil
			for _, r := range st.Resources {
				c := concrete(r)
				for _, v := range append([]string{c}, variants(c)...) {
					if typ := resourceType(v); typ != "" && a.Resources != nil && hasType(a, typ) {
						rs = appendNew(rs, v)
					}
				}
			}
		}
		ctxs := u.contexts(a)
		if len(ctxs) > 2 {
			ctxs = []map[string][]string{ctxs[0], ctxs[len(ctxs)-1]}
		}
		for _, r := range rs[:min(resources, len(rs))] {
			for _, ctx := range ctxs {
				out = append(out, iam.Request{Action: action, Resource: r, Context: ctx})
			}
		}
	}
	return out
}

// hasType reports whether action a is authorised on resources of type typ ("dynamodb:table").
func hasType(a gatekeeper.Action, typ string) bool {
	_, name, _ := strings.Cut(typ, ":")
	return slices.ContainsFunc(a.Resources, func(rt string) bool { return strings.TrimSuffix(rt, "*") == name })
}

// mutant is one statement changed, and how.
type mutant struct {
	kind, what string
	statement  map[string]any
}

// mutate returns the statement changed in each of the ways a team's edit changes one: an
// action another of its service, a resource another of its type (or its name widened), a
// condition key another the gatekeeper computes, an operator another (its set qualifier
// changed or dropped, negated, exact for a pattern, IfExists), and the effect turned.
func mutate(raw any, u *universe) []mutant {
	st, _ := raw.(map[string]any)
	var out []mutant
	with := func(kind, what string, change func(m map[string]any)) {
		m := iam.DeepCopy(st).(map[string]any)
		change(m)
		out = append(out, mutant{kind, what, m})
	}
	if acts := iam.List(st["Action"]); len(acts) > 0 {
		first := fmt.Sprint(acts[0])
		if other := sibling(first); other != "" {
			with("action", first+" → "+other, func(m map[string]any) { m["Action"] = append([]any{other}, acts[1:]...) })
		}
	}
	if res := iam.List(st["Resource"]); len(res) > 0 {
		first := fmt.Sprint(res[0])
		for _, other := range []string{otherOfType(first, u), widened(first)} {
			if other != "" && other != first {
				with("resource", first+" → "+other, func(m map[string]any) { m["Resource"] = append([]any{other}, res[1:]...) })
			}
		}
	}
	cond, _ := st["Condition"].(map[string]any)
	for _, op := range slices.Sorted(maps.Keys(cond)) {
		keys, _ := cond[op].(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(keys)) {
			if other := otherKey(key); other != "" {
				with("condition key", op+" "+key+" → "+other, func(m map[string]any) {
					c := m["Condition"].(map[string]any)[op].(map[string]any)
					c[other] = c[key]
					delete(c, key)
				})
			}
		}
		for _, other := range otherOperators(op) {
			with("operator", op+" → "+other, func(m map[string]any) {
				c := m["Condition"].(map[string]any)
				c[other] = c[op]
				if other != op {
					delete(c, op)
				}
			})
		}
	}
	if st["Effect"] == "Allow" {
		with("effect", "Allow → Deny", func(m map[string]any) { m["Effect"] = "Deny" })
	}
	return out
}

// sibling is another action the gatekeeper maps of action's service, "" for none.
func sibling(action string) string {
	svc, _, _ := strings.Cut(strings.ToLower(action), ":")
	for _, a := range gatekeeper.ActionNames() {
		if strings.HasPrefix(strings.ToLower(a), svc+":") && !iam.Like(strings.ToLower(action), strings.ToLower(a)) {
			return a
		}
	}
	return ""
}

// otherOfType is another resource of the universe of pattern's type, "" for none.
func otherOfType(pattern string, u *universe) string {
	typ := resourceType(concrete(pattern))
	for _, r := range u.resources[typ] {
		if !iam.Like(pattern, r) {
			return r
		}
	}
	return ""
}

// widened is an ARN pattern with its resource name's end a wildcard: table/app → table/ap*.
func widened(pattern string) string {
	if !strings.HasPrefix(pattern, "arn:") || strings.HasSuffix(pattern, "*") || len(pattern) < 8 {
		return ""
	}
	return pattern[:len(pattern)-2] + "*"
}

// otherKey is another key the gatekeeper computes, for a condition's key.
func otherKey(key string) string {
	switch strings.ToLower(key) {
	case "dynamodb:leadingkeys":
		return "aws:PrincipalArn"
	case "s3:prefix":
		return "s3:delimiter"
	}
	return "dynamodb:LeadingKeys"
}

// otherOperators are operators a team might have written instead of op.
func otherOperators(op string) []string {
	set, base, ok := strings.Cut(op, ":")
	if !ok {
		set, base = "", op
	}
	var out []string
	add := func(s, b string) {
		o := b
		if s != "" {
			o = s + ":" + b
		}
		if o != op && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	for _, s := range []string{"", "ForAllValues", "ForAnyValue"} {
		add(s, base)
	}
	negated := map[string]string{"StringLike": "StringNotLike", "StringNotLike": "StringLike", "StringEquals": "StringNotEquals",
		"StringNotEquals": "StringEquals", "ArnLike": "ArnNotLike", "ArnNotLike": "ArnLike", "ArnEquals": "ArnNotEquals", "ArnNotEquals": "ArnEquals"}
	if n, ok := negated[base]; ok {
		add(set, n)
	}
	if b, ok := strings.CutSuffix(base, "Like"); ok {
		add(set, b+"Equals")
	}
	if base != "Null" && !strings.HasSuffix(base, "IfExists") {
		add(set, base+"IfExists")
	}
	return out
}
