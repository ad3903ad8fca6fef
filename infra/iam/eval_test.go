package iam_test

import (
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/iam"
)

func policy(t *testing.T, statements ...any) iam.Policy {
	t.Helper()
	p, err := iam.ParsePolicy("P", map[string]any{"Version": "2012-10-17", "Statement": statements})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type st = map[string]any

const table = "arn:aws:dynamodb:us-east-1:000000000000:table/idem"

func TestEvaluate_decides_as_IAM_does(t *testing.T) {
	ledger := st{"Effect": "Allow", "Action": []any{"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
		"Resource": table, "Condition": st{"ForAllValues:StringLike": st{"dynamodb:LeadingKeys": []any{"ledger#*", "#hold#ledger#*"}}}}
	keys := func(k ...string) map[string][]string { return map[string][]string{"dynamodb:leadingkeys": k} }
	tests := []struct {
		name      string
		sts       []any
		req       iam.Request
		allowed   bool
		explicit  bool
		closest   int    // -1: none
		whyHas    string // in Why
		byIndex   int
		byMatters bool
	}{
		{"an action and resource the statement names", []any{ledger},
			iam.Request{Action: "dynamodb:PutItem", Resource: table, Context: keys("ledger#ev-1")}, true, false, -1, "", 0, true},
		{"an action it does not name is refused, the statement the closest", []any{ledger},
			iam.Request{Action: "dynamodb:ConditionCheckItem", Resource: table, Context: keys("#hold#ledger#acc-1")}, false, false, 0,
			"do not include dynamodb:ConditionCheckItem", 0, false},
		{"a leading key outside the patterns is refused", []any{ledger},
			iam.Request{Action: "dynamodb:GetItem", Resource: table, Context: keys("note-tagger#ev-1")}, false, false, 0,
			"dynamodb:leadingkeys [note-tagger#ev-1]", 0, false},
		{"ForAllValues: one key outside fails the whole request", []any{ledger},
			iam.Request{Action: "dynamodb:GetItem", Resource: table, Context: keys("ledger#a", "other#b")}, false, false, 0, "other#b", 0, false},
		{"ForAllValues holds vacuously for a request with no leading keys", []any{ledger},
			iam.Request{Action: "dynamodb:GetItem", Resource: table}, true, false, -1, "", 0, true},
		{"another resource is refused", []any{ledger},
			iam.Request{Action: "dynamodb:GetItem", Resource: table + "x", Context: keys("ledger#a")}, false, false, 0, "resources do not match", 0, false},
		{"actions match case-insensitively, with wildcards", []any{st{"Effect": "Allow", "Action": "SQS:Send*", "Resource": "*"}},
			iam.Request{Action: "sqs:SendMessage", Resource: "arn:aws:sqs:us-east-1:000000000000:q"}, true, false, -1, "", 0, true},
		{"resources match case-sensitively", []any{st{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::Bucket/*"}},
			iam.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::bucket/k"}, false, false, 0, "resources do not match", 0, false},
		{"a resource wildcard spans slashes", []any{st{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"}},
			iam.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/a/b/c"}, true, false, -1, "", 0, true},
		{"an explicit Deny wins over an Allow", []any{st{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"},
			st{"Effect": "Deny", "Action": "sqs:DeleteMessage", "Resource": "*"}},
			iam.Request{Action: "sqs:DeleteMessage", Resource: "arn:aws:sqs:us-east-1:000000000000:q"}, false, true, -1, "", 1, true},
		{"NotAction allows every other action", []any{st{"Effect": "Allow", "NotAction": "sqs:DeleteMessage", "Resource": "*"}},
			iam.Request{Action: "sqs:SendMessage", Resource: "x"}, true, false, -1, "", 0, true},
		{"NotAction refuses its own", []any{st{"Effect": "Allow", "NotAction": "sqs:DeleteMessage", "Resource": "*"}},
			iam.Request{Action: "sqs:deletemessage", Resource: "x"}, false, false, 0, "", 0, false},
		{"NotResource allows every other resource", []any{st{"Effect": "Allow", "Action": "s3:GetObject", "NotResource": "arn:aws:s3:::secret/*"}},
			iam.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::open/k"}, true, false, -1, "", 0, true},
		{"NotResource refuses its own", []any{st{"Effect": "Allow", "Action": "s3:GetObject", "NotResource": "arn:aws:s3:::secret/*"}},
			iam.Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::secret/k"}, false, false, 0, "", 0, false},
		{"nothing allows: the implicit deny, no statement closest", []any{st{"Effect": "Deny", "Action": "kms:*", "Resource": "*"}},
			iam.Request{Action: "sqs:SendMessage", Resource: "x"}, false, false, -1, "", 0, false},
		{"the closest statement is the one matching action and resource", []any{
			st{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "arn:aws:sqs:us-east-1:000000000000:dlq"},
			st{"Effect": "Allow", "Action": "sqs:ReceiveMessage", "Resource": "arn:aws:sqs:us-east-1:000000000000:q"}},
			iam.Request{Action: "sqs:SendMessage", Resource: "arn:aws:sqs:us-east-1:000000000000:q"}, false, false, 0, "resources", 0, false},
		{"closest: a statement of the action's service on the resource, not a logs statement on *", []any{
			st{"Effect": "Allow", "Action": []any{"logs:CreateLogGroup", "logs:PutLogEvents"}, "Resource": "*"}, ledger},
			iam.Request{Action: "dynamodb:ConditionCheckItem", Resource: table, Context: keys("#hold#ledger#a")}, false, false, 1,
			"do not include dynamodb:ConditionCheckItem", 0, false},
		{"StringEquals on a missing key fails; StringNotEquals on it holds", []any{
			st{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*", "Condition": st{"StringEquals": st{"s3:prefix": "a/"}}},
			st{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*", "Condition": st{"StringNotEquals": st{"s3:delimiter": "/"}}}},
			iam.Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::b", Context: map[string][]string{"s3:prefix": {"b/"}}}, true, false, -1, "", 1, true},
		{"IfExists holds without the key", []any{
			st{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*", "Condition": st{"StringEqualsIfExists": st{"s3:prefix": "a/"}}}},
			iam.Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::b"}, true, false, -1, "", 0, true},
		{"Null holds for any of its values: false with the key", []any{
			st{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*", "Condition": st{"Null": st{"s3:prefix": []any{"true", "false"}}}}},
			iam.Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::b", Context: map[string][]string{"s3:prefix": {""}}}, true, false, -1, "", 0, true},
		{"Null true holds only without the key", []any{
			st{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*", "Condition": st{"Null": st{"s3:prefix": "true"}}}},
			iam.Request{Action: "s3:ListBucket", Resource: "arn:aws:s3:::b", Context: map[string][]string{"s3:prefix": {""}}}, false, false, 0, "", 0, false},
		{"ForAnyValue needs one value", []any{
			st{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*", "Condition": st{"ForAnyValue:StringEquals": st{"dynamodb:LeadingKeys": "a"}}}},
			iam.Request{Action: "dynamodb:GetItem", Resource: table}, false, false, 0, "has no dynamodb:leadingkeys", 0, false},
		{"condition keys are case-insensitive", []any{
			st{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*", "Condition": st{"ForAllValues:StringLike": st{"DynamoDB:LeadingKeys": "a*"}}}},
			iam.Request{Action: "dynamodb:GetItem", Resource: table, Context: keys("abc")}, true, false, -1, "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := iam.Evaluate([]iam.Policy{policy(t, tt.sts...)}, tt.req)
			if d.Allowed != tt.allowed || d.Explicit() != tt.explicit {
				t.Fatalf("allowed %v explicit %v; want %v, %v (%+v)", d.Allowed, d.Explicit(), tt.allowed, tt.explicit, d)
			}
			if tt.byMatters && (d.By == nil || d.By.Index != tt.byIndex) {
				t.Errorf("decided by %v; want statement %d", d.By, tt.byIndex)
			}
			if !d.Allowed && !tt.explicit {
				switch {
				case tt.closest < 0 && d.Closest != nil:
					t.Errorf("closest %v; want none", d.Closest)
				case tt.closest >= 0 && (d.Closest == nil || d.Closest.Index != tt.closest):
					t.Errorf("closest %v; want statement %d", d.Closest, tt.closest)
				}
				if !strings.Contains(d.Why, tt.whyHas) {
					t.Errorf("why %q; want it to say %q", d.Why, tt.whyHas)
				}
			}
		})
	}
}

func TestParsePolicy_refuses_what_it_cannot_evaluate(t *testing.T) {
	tests := []struct {
		name string
		st   any
		want string
	}{
		{"a numeric operator", st{"Effect": "Allow", "Action": "a:b", "Resource": "*", "Condition": st{"NumericLessThan": st{"k": "1"}}}, "not evaluated here"},
		{"an unresolved intrinsic", st{"Effect": "Allow", "Action": "a:b", "Resource": st{"Fn::GetAtt": []any{"T", "Arn"}}}, "intrinsic function left unresolved"},
		{"no resource", st{"Effect": "Allow", "Action": "a:b"}, "Resource and NotResource"},
		{"both Action and NotAction", st{"Effect": "Allow", "Action": "a:b", "NotAction": "a:c", "Resource": "*"}, "Action and NotAction"},
		{"a Principal", st{"Effect": "Allow", "Action": "a:b", "Resource": "*", "Principal": "*"}, "Principal"},
		{"an effect IAM has not", st{"Effect": "Permit", "Action": "a:b", "Resource": "*"}, "want Allow or Deny"},
		{"a policy variable, named with the statement's Sid", st{"Sid": "Own", "Effect": "Allow", "Action": "s3:GetObject",
			"Resource": "arn:aws:s3:::b/${aws:username}/*"}, `statement 0 (Sid Own): Resource "arn:aws:s3:::b/${aws:username}/*": the policy variable ${aws:username}`},
		{"a policy variable in a condition", st{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*",
			"Condition": st{"ForAllValues:StringEquals": st{"dynamodb:LeadingKeys": "${aws:userid}"}}}, "policy variable ${aws:userid}"},
		{"an ARN left short without a trailing *", st{"Effect": "Allow", "Action": "sqs:*", "Resource": "arn:aws:sqs:*123456789012:q.fifo"},
			"not a whole ARN (5 of its 6"},
		{"a wildcard in a resource's service", st{"Effect": "Allow", "Action": "sqs:*", "Resource": "arn:aws:s*:us-east-1:1:q"}, "a wildcard in the service"},
		{"a wildcard in a resource type", st{"Effect": "Allow", "Action": "dynamodb:*", "Resource": "arn:aws:dynamodb:us-east-1:1:*/idem"},
			"a wildcard in the resource type (*)"},
		{"a wildcard in an action's service", st{"Effect": "Allow", "Action": "dynamo*:GetItem", "Resource": "*"}, "wildcard in the service prefix"},
		{"an ArnLike value that is not a whole ARN", st{"Effect": "Allow", "Action": "a:b", "Resource": "*",
			"Condition": st{"ArnLike": st{"aws:PrincipalArn": "arn:aws:iam::*role/x"}}}, "not a whole ARN"},
		{"NullIfExists", st{"Effect": "Allow", "Action": "a:b", "Resource": "*", "Condition": st{"NullIfExists": st{"s3:prefix": "true"}}}, "not evaluated here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := iam.ParsePolicy("P", map[string]any{"Statement": []any{tt.st}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v; want one saying %q", err, tt.want)
			}
		})
	}
}

func TestLike_matches_IAM_wildcards(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"NOTE#*", "NOTE#n-1", true},
		{"NOTE#*", "NOTE#", true},
		{"NOTE#*", "OUTBOX#NOTE#n-1", false},
		{"ledger#*", "ledger-2#ev", false},
		{"ledger#*", "ledger#ev", true},
		{"a?c", "abc", true},
		{"a?c", "aéc", true}, // ? is one character, not one byte
		{"a.c", "abc", false},
		{"*a*b*", "xxaxxbxx", true},
		{"*a*b", "xxaxxbxxc", false},
		{"", "", true},
		{"*", "", true},
	}
	for _, tt := range tests {
		if got := iam.Like(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Like(%q, %q) = %v; want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

// ARN conditions as AWS evaluates them: ArnEquals and ArnNotEquals take wildcards as ArnLike
// and ArnNotLike do, and each of the six colon-separated components is matched on its own, so
// a * never reaches across a colon into the next one.
func TestEvaluate_matches_ARN_conditions_component_by_component(t *testing.T) {
	role := "arn:aws:iam::000000000000:role/LedgerFunctionRole"
	stream := "arn:aws:dynamodb:us-east-1:000000000000:table/app/stream/2026-12-01T00:00:00.000"
	tests := []struct {
		op, value, arn string
		holds          bool
	}{
		{"ArnEquals", "arn:aws:iam::000000000000:role/*", role, true},
		{"ArnEquals", "arn:aws:iam::*:role/LedgerFunction?ole", role, true},
		{"ArnNotEquals", "arn:aws:iam::000000000000:role/*", role, false},
		{"ArnNotEquals", "arn:aws:iam::111111111111:role/*", role, true},
		{"ArnLike", "arn:aws:iam::*:role/Ledger*", role, true},
		{"ArnLike", "arn:aws:iam::000000000000:*", role, true},            // the resource part is one component
		{"ArnLike", "arn:aws:dynamodb:us-east-1:*:00.000", stream, false}, // * in the account, not across it into the resource
		{"ArnNotLike", "arn:aws:dynamodb:us-east-1:*:00.000", stream, true},
		{"ArnLike", "arn:aws:dynamodb:us-east-1:*:table/app/stream/*", stream, true}, // within the resource part, * spans its colons
		{"ArnLike", "arn:aws:dynamo*:us-east-1:000000000000:table/app/stream/*", stream, true},
		{"ArnLike", "arn:aws:dynamodb:us-east-1:000000000000:table/app", stream, false},
	}
	for _, tt := range tests {
		t.Run(tt.op+" "+tt.value, func(t *testing.T) {
			p := policy(t, st{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*",
				"Condition": st{tt.op: st{"aws:SourceArn": tt.value}}})
			d := iam.Evaluate([]iam.Policy{p}, iam.Request{Action: "sqs:SendMessage", Resource: "arn:aws:sqs:us-east-1:000000000000:q",
				Context: map[string][]string{"aws:sourcearn": {tt.arn}}})
			if d.Allowed != tt.holds {
				t.Errorf("%s %s on %s: holds %v; want %v (%s)", tt.op, tt.value, tt.arn, d.Allowed, tt.holds, d.Why)
			}
		})
	}
}

// A Resource ARN is matched component by component too: a * inside a segment covers part of
// that segment only; one that ends the last segment of an ARN the policy leaves short stands
// for the segments left out.
func TestEvaluate_matches_resource_ARNs_component_by_component(t *testing.T) {
	queue := "arn:aws:sqs:us-east-1:123456789012:q.fifo"
	stream := "arn:aws:dynamodb:us-east-1:123456789012:table/app/stream/2026-12-01T00:00:00.000"
	tests := []struct {
		pattern, resource string
		allowed           bool
	}{
		{"arn:aws:sqs:*123456789012:q.fifo*", queue, false}, // a colon left out: * does not take us-east-1: with it
		{"arn:aws:sqs:*:123456789012:q.fifo", queue, true},
		{"arn:aws:sqs:us-*:123456789012:q.*", queue, true},
		{"arn:aws:sqs:us-east-1:*", queue, true},
		{"arn:aws:sqs:*:*:*", queue, true},
		{"arn:aws:sqs:*:1234*:q.fifo", queue, true},
		{"arn:aws:sqs:us-east-1:12345678901?:q.fifo", queue, true},
		{"arn:aws:dynamodb:us-east-1:*:00.000", stream, false},
		{"arn:aws:dynamodb:us-east-1:123456789012:table/app/stream/*", stream, true},
		{"arn:aws:dynamodb:*:123456789012:table/app*", "arn:aws:dynamodb:us-east-1:123456789012:table/app/index/byTag", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			p := policy(t, st{"Effect": "Allow", "Action": "*", "Resource": tt.pattern})
			if d := iam.Evaluate([]iam.Policy{p}, iam.Request{Action: "sqs:SendMessage", Resource: tt.resource}); d.Allowed != tt.allowed {
				t.Errorf("Resource %s on %s: allowed %v; want %v", tt.pattern, tt.resource, d.Allowed, tt.allowed)
			}
		})
	}
}

// dynamodb:LeadingKeys is multivalued (ArrayOfString in the service authorization reference):
// an operator without ForAllValues or ForAnyValue never matches it when the request has it,
// negated operators and IfExists included, so neither an Allow nor a Deny written that way
// applies; without the key, the operators answer as for any missing key.
func TestEvaluate_single_valued_operators_never_match_a_multivalued_key(t *testing.T) {
	allowAll := st{"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}
	tests := []struct {
		name    string
		sts     []any
		keys    []string // nil: the request has no dynamodb:LeadingKeys
		allowed bool
	}{
		{"an Allow with StringLike does not allow its own keys", []any{st{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*",
			"Condition": st{"StringLike": st{"dynamodb:LeadingKeys": "ledger#*"}}}}, []string{"ledger#a"}, false},
		{"an Allow with StringEquals neither", []any{st{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*",
			"Condition": st{"StringEquals": st{"dynamodb:LeadingKeys": "ledger#a"}}}}, []string{"ledger#a"}, false},
		{"an Allow with StringLikeIfExists neither", []any{st{"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*",
			"Condition": st{"StringLikeIfExists": st{"dynamodb:LeadingKeys": "ledger#*"}}}}, []string{"ledger#a"}, false},
		{"a Deny guardrail with StringNotLike refuses nothing", []any{allowAll, st{"Effect": "Deny", "Action": "dynamodb:*", "Resource": "*",
			"Condition": st{"StringNotLike": st{"dynamodb:LeadingKeys": "ledger#*"}}}}, []string{"other#a"}, true},
		{"a Deny with StringEquals refuses nothing", []any{allowAll, st{"Effect": "Deny", "Action": "dynamodb:*", "Resource": "*",
			"Condition": st{"StringEquals": st{"dynamodb:LeadingKeys": "other#a"}}}}, []string{"other#a"}, true},
		{"the same Deny with ForAnyValue refuses", []any{allowAll, st{"Effect": "Deny", "Action": "dynamodb:*", "Resource": "*",
			"Condition": st{"ForAnyValue:StringEquals": st{"dynamodb:LeadingKeys": "other#a"}}}}, []string{"other#a"}, false},
		{"without the key, StringNotLike holds: the Deny refuses", []any{allowAll, st{"Effect": "Deny", "Action": "dynamodb:*", "Resource": "*",
			"Condition": st{"StringNotLike": st{"dynamodb:LeadingKeys": "ledger#*"}}}}, nil, false},
		{"without the key, StringLikeIfExists holds: the Allow allows", []any{st{"Effect": "Allow", "Action": "dynamodb:Scan", "Resource": "*",
			"Condition": st{"StringLikeIfExists": st{"dynamodb:LeadingKeys": "ledger#*"}}}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := iam.Request{Action: "dynamodb:GetItem", Resource: table}
			if tt.keys != nil {
				req.Context = map[string][]string{"dynamodb:leadingkeys": tt.keys}
			} else {
				req.Action = "dynamodb:Scan"
			}
			if d := iam.Evaluate([]iam.Policy{policy(t, tt.sts...)}, req); d.Allowed != tt.allowed {
				t.Errorf("allowed %v; want %v (%+v)", d.Allowed, tt.allowed, d)
			}
		})
	}
}

// A NotResource ARN left short with a trailing * stands for the resources whose ARN continues
// it, as the * that ends an ARN's last segment reaches across the colons after it: a resource of
// another service, region or account is outside it, so an Allow with NotResource allows it and
// a Deny with NotResource refuses it.
func TestEvaluate_NotResource_left_short_leaves_out_only_what_its_trailing_star_covers(t *testing.T) {
	notSQS := st{"NotResource": "arn:aws:sqs:us-east-1:*"}
	allow := st{"Effect": "Allow", "Action": "*", "NotResource": notSQS["NotResource"]}
	deny := []any{st{"Effect": "Allow", "Action": "*", "Resource": "*"}, st{"Effect": "Deny", "Action": "*", "NotResource": notSQS["NotResource"]}}
	tests := []struct {
		resource            string
		allowed, denyDenies bool
	}{
		{table, true, true},
		{"arn:aws:sqs:eu-west-1:000000000000:q", true, true},
		{"arn:aws:sqs:us-east-1:000000000000:q", false, false},
	}
	for _, tt := range tests {
		req := iam.Request{Action: "sqs:SendMessage", Resource: tt.resource}
		if d := iam.Evaluate([]iam.Policy{policy(t, allow)}, req); d.Allowed != tt.allowed {
			t.Errorf("Allow NotResource %v on %s: allowed %v; want %v", notSQS["NotResource"], tt.resource, d.Allowed, tt.allowed)
		}
		if d := iam.Evaluate([]iam.Policy{policy(t, deny...)}, req); d.Explicit() != tt.denyDenies {
			t.Errorf("Deny NotResource %v on %s: refused explicitly %v; want %v", notSQS["NotResource"], tt.resource, d.Explicit(), tt.denyDenies)
		}
	}
}
