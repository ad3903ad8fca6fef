package localcloud

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/infra/iam"
)

// Principal is an identity the gatekeeper knows: a function's execution role, or a role with
// one AWS::IAM::ManagedPolicy of the template attached and nothing else (an operator's, say).
// Its credentials are local: the gatekeeper reads the access key id to know the caller and
// does not check signatures, so the secret is the same for every principal.
type Principal struct {
	ARN             string `json:"arn"`
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
}

// gatedServices are the services the gatekeeper stands in front of: a statement about another
// service (kms, logs, xray) is kept only when it resolves locally, since nothing here serves it.
var gatedServices = []string{"dynamodb", "sqs", "s3", "kinesis", "ssm"}

// principals derives the gatekeeper's principals from the template, once its resources exist
// (derivePrincipals with the cloud's own resources).
func (c *Cloud) principals() ([]gatekeeper.Principal, map[string]Principal, error) {
	return derivePrincipals(c.cfg.Template, c.tmpl, c.refs, c.log)
}

// derivePrincipals derives the gatekeeper's principals from the template at path: each
// function with the role the SAM transform creates for it (iam.Roles), each managed policy of
// the template as a role of its own, their statements resolved with the resources r names. A
// policy the gatekeeper cannot decide as AWS does (iam.ParsePolicy, gatekeeper.CheckPolicies)
// is an error naming the function or managed policy, the policy, the statement and the element.
func derivePrincipals(path string, tmpl *Template, r *refs, log *slog.Logger) ([]gatekeeper.Principal, map[string]Principal, error) {
	src, err := LoadDocument(path)
	if err != nil {
		return nil, nil, err
	}
	roles, err := iam.Roles(src)
	if err != nil {
		return nil, nil, fmt.Errorf("roles: %w", err)
	}
	var out []gatekeeper.Principal
	creds := map[string]Principal{}
	var errs []error
	add := func(what, id, arn string, policies []iam.Policy, err error) {
		if err == nil {
			err = gatekeeper.CheckPolicies(policies)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", what, id, err))
			return
		}
		p := Principal{ARN: arn, AccessKeyID: "LOCAL" + id, SecretAccessKey: SecretAccessKey}
		creds[id] = p
		out = append(out, gatekeeper.Principal{Name: id, ARN: arn, AccessKeyID: p.AccessKeyID, Policies: policies})
	}
	resources, _ := src["Resources"].(map[string]any)
	res := resolver{refs: r, log: log}
	for _, id := range tmpl.Functions {
		pols, err := res.rolePolicies(roles[id], resources)
		add("function", id, fmt.Sprintf("arn:aws:sts::%s:assumed-role/%s/%s", Account, roles[id].LogicalID, id), pols, err)
	}
	for _, id := range tmpl.ManagedPolicies {
		pol, err := res.resolvePolicy(id, get(resources, id, "Properties", "PolicyDocument"))
		add("managed policy", id, fmt.Sprintf("arn:aws:sts::%s:assumed-role/%sRole/local", Account, id), []iam.Policy{pol}, err)
	}
	return out, creds, errors.Join(errs...)
}

// resolver resolves a template's policies with the resources refs names.
type resolver struct {
	refs *refs
	log  *slog.Logger
}

// rolePolicies are the policies of a derived role: its inline policies and the documents of
// its managed policies (AWS's, pinned in package iam, or the template's own by Ref).
func (c resolver) rolePolicies(r iam.Role, resources map[string]any) ([]iam.Policy, error) {
	var out []iam.Policy
	for _, arn := range r.ManagedPolicyArns {
		if ref, ok := get(arn, "Ref").(string); ok && get(resources, ref, "Type") == typeManagedPolicy {
			pol, err := c.resolvePolicy(ref, get(resources, ref, "Properties", "PolicyDocument"))
			if err != nil {
				return nil, err
			}
			out = append(out, pol)
			continue
		}
		name, ok := arn.(string)
		doc, pinned := iam.ManagedDocument(name)
		if !ok || !pinned {
			return nil, fmt.Errorf("managed policy %v: its document is not pinned (infra/iam/managed.go has %v)", arn, iam.ManagedPolicyARNs())
		}
		pol, err := iam.ParsePolicy(name, doc)
		if err != nil {
			return nil, err
		}
		out = append(out, pol)
	}
	for _, p := range r.Policies {
		name, _ := get(p, "PolicyName").(string)
		pol, err := c.resolvePolicy(name, get(p, "PolicyDocument"))
		if err != nil {
			return nil, err
		}
		out = append(out, pol)
	}
	return out, nil
}

// resolvePolicy resolves a policy document of the template with the local resources, statement
// by statement. A statement that does not resolve (a KMS key, which nothing here emulates) is
// left out when it is only about services the gatekeeper does not serve, else it is an error:
// the gatekeeper never evaluates less than the template says for a service it guards.
func (c resolver) resolvePolicy(name string, document any) (iam.Policy, error) {
	var kept []any
	for i, st := range asList(get(document, "Statement")) {
		v, err := c.resolveValue(st)
		if err != nil {
			if !gated(st) {
				c.log.Debug("policy statement left out: it does not resolve locally and is about no service the gatekeeper serves",
					"policy", name, "statement", i, "err", err)
				continue
			}
			return iam.Policy{}, fmt.Errorf("policy %s statement %d: %w", name, i, err)
		}
		kept = append(kept, canonicalARNs(v))
	}
	if len(kept) == 0 {
		return iam.Policy{Name: name}, nil
	}
	return iam.ParsePolicy(name, map[string]any{"Statement": kept})
}

// resolveValue resolves the intrinsic functions of a JSON-shaped template value (long forms).
func (c resolver) resolveValue(v any) (any, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return c.refs.resolve(&n)
}

// gated reports whether a statement names an action of a service the gatekeeper serves.
func gated(st any) bool {
	for _, a := range asList(get(st, "Action")) {
		svc, _, _ := strings.Cut(fmt.Sprint(a), ":")
		if slices.Contains(gatedServices, strings.ToLower(svc)) || strings.Contains(svc, "*") {
			return true
		}
	}
	return get(st, "NotAction") != nil
}

// canonicalARN is an ARN as AWS writes it: DynamoDB Local names its tables' and streams'
// region "ddblocal", where AWS has the stack's region.
func canonicalARN(s string) string {
	return strings.Replace(s, ":dynamodb:ddblocal:", ":dynamodb:"+Region+":", 1)
}

func canonicalARNs(v any) any {
	switch x := v.(type) {
	case string:
		return canonicalARN(x)
	case map[string]any:
		for k, e := range x {
			x[k] = canonicalARNs(e)
		}
	case []any:
		for i, e := range x {
			x[i] = canonicalARNs(e)
		}
	}
	return v
}

func get(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func asList(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	}
	return []any{v}
}
