package iam_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/gatekeeper"
	"github.com/onceflow/onceflow/infra/iam"
)

// The principal of the generated cases, and the resources they name.
var (
	genPrincipal = gatekeeper.Principal{Name: "Fn", ARN: "arn:aws:sts::000000000000:assumed-role/FnRole/Fn"}
	genTable     = "arn:aws:dynamodb:us-east-1:000000000000:table/app"
	genQueue     = "arn:aws:sqs:us-east-1:000000000000:ledger.fifo"
	genBucket    = "arn:aws:s3:::payloads"
)

// genPolicy parses statements as one policy of the generated cases.
func genPolicy(t *testing.T, statements ...any) []iam.Policy {
	t.Helper()
	p, err := iam.ParsePolicy("Generated", map[string]any{"Version": "2012-10-17", "Statement": statements})
	if err != nil {
		t.Fatalf("generated policy %v: %v", statements, err)
	}
	return []iam.Policy{p}
}

func genCase(kind, what string, policies []iam.Policy, action, resource string, ctx map[string][]string) simCase {
	return newCase(kind, what, genPrincipal.ARN, policies, action, resource, gate.Context(&genPrincipal, ctx))
}

// keySituation is a request as one condition key sees it: the action and resource it is
// decided on and the key's values (nil: the request has no such key).
type keySituation struct {
	what, action, resource string
	values                 []string
}

// conditionKeys are the keys the generated conditions test, each with the requests that give
// it no value, one, and (multivalued) several, and policy values that match, match by
// wildcard or case only, or do not.
var conditionKeys = []struct {
	key        string
	situations []keySituation
	policy     [][]any
}{
	{"dynamodb:LeadingKeys", []keySituation{
		{"a Scan has none", "dynamodb:Scan", genTable, nil},
		{"one item", "dynamodb:GetItem", genTable, []string{"ledger#a"}},
		{"two items, both ledger's", "dynamodb:BatchGetItem", genTable, []string{"ledger#a", "ledger#b"}},
		{"two items, one another's", "dynamodb:BatchGetItem", genTable, []string{"ledger#a", "other#b"}},
		{"no item at all", "dynamodb:BatchWriteItem", genTable, []string{}},
	}, [][]any{{"ledger#a"}, {"ledger#*"}, {"LEDGER#A"}, {"other#*", "ledger#?"}, {"nothing#*"}}},
	{"aws:PrincipalArn", []keySituation{{"a role session", "sqs:SendMessage", genQueue, nil}},
		[][]any{{"arn:aws:iam::000000000000:role/FnRole"}, {"arn:aws:iam::*:role/Fn*"}, {"arn:aws:iam::000000000000:role/fnrole"},
			{"arn:aws:sts::000000000000:assumed-role/FnRole/Fn"}, {"arn:aws:iam::000000000000:role/Other", "arn:aws:iam::0000000000?0:role/FnRole"}}},
	{"aws:RequestedRegion", []keySituation{{"the stack's region", "sqs:SendMessage", genQueue, nil}},
		[][]any{{"us-east-1"}, {"us-*"}, {"US-EAST-1"}, {"eu-west-1"}}},
	{"s3:prefix", []keySituation{
		{"a listing without a prefix", "s3:ListBucket", genBucket, nil},
		{"a listing of a/", "s3:ListBucket", genBucket, []string{"a/"}},
		{"a listing with an empty prefix", "s3:ListBucket", genBucket, []string{""}},
	}, [][]any{{"a/"}, {"a*"}, {"A/"}, {"b/"}, {""}}},
	{"aws:SecureTransport", []keySituation{{"over HTTPS", "sqs:SendMessage", genQueue, nil}},
		[][]any{{"true"}, {"false"}, {"TRUE"}, {true}}},
}

// operatorCases decide a condition on each key, with each operator, set qualifier and
// IfExists, alone in an Allow and as a Deny beside an Allow of everything.
func operatorCases(t *testing.T) []simCase {
	bases := []string{"StringEquals", "StringNotEquals", "StringEqualsIgnoreCase", "StringNotEqualsIgnoreCase", "StringLike", "StringNotLike",
		"ArnEquals", "ArnNotEquals", "ArnLike", "ArnNotLike", "Bool", "Null"}
	var out []simCase
	for _, k := range conditionKeys {
		for _, base := range bases {
			if strings.HasPrefix(base, "Arn") && k.key != "aws:PrincipalArn" || base == "Bool" && k.key != "aws:SecureTransport" {
				continue // an operator of another type than the key's
			}
			for _, set := range []string{"", "ForAllValues:", "ForAnyValue:"} {
				for _, ifExists := range []string{"", "IfExists"} {
					if base == "Null" && ifExists != "" {
						continue
					}
					op := set + base + ifExists
					values := k.policy
					if base == "Null" {
						values = [][]any{{"true"}, {"false"}}
					}
					for _, v := range values {
						cond := map[string]any{op: map[string]any{k.key: v}}
						allow := genPolicy(t, map[string]any{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": cond})
						deny := genPolicy(t, map[string]any{"Effect": "Allow", "Action": "*", "Resource": "*"},
							map[string]any{"Effect": "Deny", "Action": "*", "Resource": "*", "Condition": cond})
						for _, s := range k.situations {
							ctx := map[string][]string{}
							if s.values != nil {
								ctx[strings.ToLower(k.key)] = s.values
							}
							what := fmt.Sprintf("%s %s %v, %s", op, k.key, v, s.what)
							out = append(out, genCase(opKind(base, set), "Allow if "+what, allow, s.action, s.resource, ctx),
								genCase(opKind(base, set), "Deny if "+what, deny, s.action, s.resource, ctx))
						}
					}
				}
			}
		}
	}
	return out
}

// opKind is the kind of an operator's cases: its base operator, and its set qualifier.
func opKind(base, set string) string {
	if set == "" {
		return "operator " + base
	}
	return "operator " + strings.TrimSuffix(set, ":") + ":" + base
}

// elementCases decide NotAction, NotResource, explicit Deny and ARN wildcards in Resource.
func elementCases(t *testing.T) []simCase {
	var out []simCase
	requests := []struct{ action, resource string }{
		{"dynamodb:GetItem", genTable}, {"dynamodb:Query", genTable + "/index/byTag"}, {"dynamodb:GetRecords", genTable + "/stream/2026-12-01T00:00:00.000"},
		{"sqs:SendMessage", genQueue}, {"sqs:DeleteMessage", genQueue}, {"sqs:SendMessage", "arn:aws:sqs:eu-west-1:111111111111:ledger.fifo"},
		{"s3:GetObject", genBucket + "/a/b.json"}, {"s3:ListBucket", genBucket}, {"s3:ListAllMyBuckets", "*"}, {"sqs:ListQueues", "*"},
		{"kinesis:GetRecords", "arn:aws:kinesis:us-east-1:000000000000:stream/clicks"},
		{"kinesis:SubscribeToShard", "arn:aws:kinesis:us-east-1:000000000000:stream/clicks/consumer/fan:1796000000"},
	}
	decide := func(kind, what string, policies []iam.Policy) {
		for _, r := range requests {
			var ctx map[string][]string
			if a, _ := gatekeeper.LookupAction(r.action); a.Has("dynamodb:LeadingKeys") {
				ctx = map[string][]string{"dynamodb:leadingkeys": {"ledger#a"}}
			}
			out = append(out, genCase(kind, what, policies, r.action, r.resource, ctx))
		}
	}
	st := func(effect string, kv ...any) map[string]any {
		m := map[string]any{"Effect": effect}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	allowAll := st("Allow", "Action", "*", "Resource", "*")
	for _, na := range [][]any{{"sqs:DeleteMessage"}, {"sqs:*"}, {"dynamodb:Get*", "s3:*Object"}, {"*"}, {"SQS:deletemessage"}} {
		decide("NotAction", fmt.Sprintf("Allow NotAction %v", na), genPolicy(t, st("Allow", "NotAction", na, "Resource", "*")))
		decide("NotAction", fmt.Sprintf("Deny NotAction %v", na), genPolicy(t, allowAll, st("Deny", "NotAction", na, "Resource", "*")))
	}
	notResources := [][]any{{genQueue}, {genBucket + "/*"}, {"arn:aws:dynamodb:*:*:table/app"}, {"arn:aws:dynamodb:*:*:table/app/*"},
		{"arn:aws:sqs:us-east-1:*"}, {"*"}}
	for _, nr := range notResources {
		kind := "NotResource"
		if strings.Count(fmt.Sprint(nr[0]), ":") == 4 {
			kind = "NotResource with an ARN left short"
		}
		decide(kind, fmt.Sprintf("Allow NotResource %v", nr), genPolicy(t, st("Allow", "Action", "*", "NotResource", nr)))
		decide(kind, fmt.Sprintf("Deny NotResource %v", nr), genPolicy(t, allowAll, st("Deny", "Action", "*", "NotResource", nr)))
	}
	for _, d := range []map[string]any{
		st("Deny", "Action", "sqs:DeleteMessage", "Resource", "*"),
		st("Deny", "Action", "*", "Resource", genBucket+"/a/*"),
		st("Deny", "Action", "dynamodb:*", "Resource", "*", "Condition", map[string]any{"ForAnyValue:StringLike": map[string]any{"dynamodb:LeadingKeys": "ledger#*"}}),
		st("Deny", "Action", "kinesis:*", "Resource", "arn:aws:kinesis:*:*:stream/clicks/consumer/*"),
	} {
		decide("explicit Deny", fmt.Sprintf("Deny %v beside an Allow of everything", d), genPolicy(t, allowAll, d))
		decide("explicit Deny", fmt.Sprintf("Deny %v alone", d), genPolicy(t, d))
	}
	for _, r := range []string{
		"arn:aws:sqs:*:000000000000:ledger.fifo", "arn:aws:sqs:us-*-1:*:ledger*", "arn:aws:sqs:us-east-1:*", "arn:aws:sqs:*:*:*",
		"arn:aws:sqs:us-east-1:000000000000:ledger.fif?", "arn:aws:SQS:US-EAST-1:000000000000:ledger.fifo", "arn:aws:sqs:*123456789012:q*",
		"arn:aws:dynamodb:*:*:table/app", "arn:aws:dynamodb:*:*:table/app/*", "arn:aws:dynamodb:*:*:table/app*", "arn:aws:dynamodb:*:*:table/*/index/*",
		"arn:aws:dynamodb:us-east-1:000000000000:table/app/stream/*", "arn:aws:dynamodb:us-east-1:*:00.000", "arn:aws:dynamodb:*:*:*",
		"arn:aws:s3:::payloads/*", "arn:aws:s3:::pay*", "arn:aws:s3:::payloads/a/?.json", "arn:aws:s3:::*/a/*", "arn:aws:s3:::payloads",
		"arn:aws:kinesis:*:*:stream/clicks", "arn:aws:kinesis:*:*:stream/clicks/*", "arn:aws:kinesis:*:*:stream/clicks/consumer/fan:*",
		"*",
	} {
		decide("ARN wildcards", "Allow Resource "+r, genPolicy(t, st("Allow", "Action", "*", "Resource", r)))
	}
	for _, v := range []string{"arn:aws:iam::000000000000:role/*", "arn:aws:iam::*:role/FnRole", "arn:*:iam::*:role/Fn?ole", "arn:aws:iam::*:*",
		"arn:aws:iam::000000000000:role/Fn", "arn:aws:sts::000000000000:assumed-role/FnRole/*"} {
		for _, op := range []string{"ArnLike", "ArnEquals", "ArnNotLike", "ArnNotEquals"} {
			decide("ARN wildcards", fmt.Sprintf("Allow if %s aws:PrincipalArn %s", op, v), genPolicy(t, st("Allow", "Action", "*", "Resource", "*",
				"Condition", map[string]any{op: map[string]any{"aws:PrincipalArn": v}})))
		}
	}
	return out
}
