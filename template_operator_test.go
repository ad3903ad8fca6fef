package onceflow_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/operator"
)

// opStatement is one statement of the OperatorPolicy as the checks read it.
type opStatement struct {
	actions   []string
	resources []string // logical ids, or AWS::StackId
	keys      []string // the dynamodb:LeadingKeys patterns; nil when unconditional
	problems  []string // what these checks cannot read
}

// operatorStatements returns the statements of the template's OperatorPolicy by Sid.
func operatorStatements(tpl doc) map[string]opStatement {
	out := map[string]opStatement{}
	for i, st := range asList(get(tpl, "Resources", "OperatorPolicy", "Properties", "PolicyDocument", "Statement")) {
		var s opStatement
		if get(st, "Effect") != "Allow" {
			s.problems = append(s.problems, fmt.Sprintf("Effect %v: want Allow only", get(st, "Effect")))
		}
		for _, a := range asList(get(st, "Action")) {
			s.actions = append(s.actions, fmt.Sprint(a))
		}
		for _, r := range asList(get(st, "Resource")) {
			if sub, ok := get(r, "Fn::Sub").(string); ok && strings.HasPrefix(sub, "${") && strings.Contains(sub, ".Arn}/") {
				// !Sub "${Bucket.Arn}/prefix*": the objects of a bucket, as Bucket/prefix*
				id, rest, _ := strings.Cut(strings.TrimPrefix(sub, "${"), ".Arn}")
				s.resources = append(s.resources, id+rest)
				continue
			}
			id := refTarget(r)
			if id == "" || (get(r, "Ref") != nil && id != "AWS::StackId") {
				s.problems = append(s.problems, fmt.Sprintf("resource %v: want a !GetAtt of a resource's Arn, or !Ref AWS::StackId", r))
				continue
			}
			s.resources = append(s.resources, id)
		}
		for op, keys := range asMap(get(st, "Condition")) {
			for key, v := range asMap(keys) {
				if op != "ForAllValues:StringLike" || key != "dynamodb:LeadingKeys" {
					s.problems = append(s.problems, fmt.Sprintf("condition %s %s: want ForAllValues:StringLike dynamodb:LeadingKeys only", op, key))
				}
				s.keys = []string{}
				for _, p := range asList(v) {
					s.keys = append(s.keys, fmt.Sprint(p))
				}
			}
		}
		sid := fmt.Sprint(get(st, "Sid"))
		if _, dup := out[sid]; dup || sid == "<nil>" {
			s.problems = append(s.problems, fmt.Sprintf("statement %d: Sid %q missing or twice", i, sid))
		}
		out[sid] = s
	}
	return out
}

// consumerQueues returns the consumers' queues (those with a redrive policy) and their
// dead-letter queues, by logical id.
func consumerQueues(tpl doc) (queues, deadLetters []string) {
	for id, q := range resourcesOfType(tpl, "AWS::SQS::Queue") {
		if dl := refTarget(get(q, "Properties", "RedrivePolicy", "deadLetterTargetArn")); dl != "" {
			queues, deadLetters = append(queues, id), append(deadLetters, dl)
		}
	}
	slices.Sort(queues)
	slices.Sort(deadLetters)
	return queues, deadLetters
}

// operatorProblems says where the OperatorPolicy is wider or narrower than the tool's calls on
// this stack (docs/cli.md): DescribeStacks on the stack; receiving, hiding and deleting letters of
// every consumer's dead-letter queue, reading the park queue; sending to every consumer queue;
// reading and writing the consumers' records, counts, holds and discarded copies under a
// dynamodb:LeadingKeys condition naming exactly their prefixes; scanning the app table.
func operatorProblems(tpl doc) []string {
	var out []string
	sts := operatorStatements(tpl)
	queues, deadLetters := consumerQueues(tpl)
	var keys []string
	for _, c := range strings.Split(fmt.Sprint(get(tpl, "Outputs", "ConsumerNames", "Value")), ",") {
		for _, p := range operator.AdminKeyPrefixes(strings.TrimSpace(c)) {
			keys = append(keys, p+"*")
		}
	}
	want := map[string]opStatement{
		"ReadTheStacksOutputs": {actions: []string{"cloudformation:DescribeStacks"}, resources: []string{"AWS::StackId"}},
		"ReadAndDeleteDeadLetters": {actions: []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl",
			"sqs:SendMessage", "sqs:ListDeadLetterSourceQueues"}, resources: deadLetters},
		"ReadParkedOutboxItems":       {actions: []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"}, resources: []string{"OutboxParkedQueue"}},
		"SendBackToTheConsumerQueues": {actions: []string{"sqs:SendMessage", "sqs:GetQueueUrl", "sqs:GetQueueAttributes"}, resources: queues},
		"ReadAndDecideTheConsumersItems": {actions: []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"},
			resources: []string{"IdempotencyTable"}, keys: keys},
		"FindOutboxItems":      {actions: []string{"dynamodb:Scan"}, resources: []string{"AppTable"}},
		"ReadOffloadedLetters": {actions: []string{"s3:GetObject"}, resources: []string{"PayloadBucket/dead-letters/*"}},
	}
	for _, sid := range slices.Sorted(maps.Keys(sts)) {
		got := sts[sid]
		for _, p := range got.problems {
			out = append(out, sid+": "+p)
		}
		w, ok := want[sid]
		if !ok {
			out = append(out, fmt.Sprintf("statement %s grants %v on %v: the tool makes no such call", sid, got.actions, got.resources))
			continue
		}
		for _, c := range []struct {
			what      string
			got, want []string
		}{{"actions", got.actions, w.actions}, {"resources", got.resources, w.resources}, {"leading keys", got.keys, w.keys}} {
			g, wt := slices.Sorted(slices.Values(c.got)), slices.Sorted(slices.Values(c.want))
			if !slices.Equal(g, wt) {
				out = append(out, fmt.Sprintf("statement %s: %s %v; want %v", sid, c.what, g, wt))
			}
		}
	}
	for sid := range want {
		if _, ok := sts[sid]; !ok {
			out = append(out, "no statement "+sid)
		}
	}
	return out
}

// The template ships the operator's tool its policy: a managed policy of exactly the tool's
// calls on this stack, its ARN an output, the same after the SAM translator.
func TestTemplate_operator_policy_grants_the_tools_calls_on_this_stack_only(t *testing.T) {
	tpl := loadTemplate(t)
	if get(tpl, "Resources", "OperatorPolicy", "Type") != "AWS::IAM::ManagedPolicy" {
		t.Fatalf("OperatorPolicy is %v; want an AWS::IAM::ManagedPolicy", get(tpl, "Resources", "OperatorPolicy", "Type"))
	}
	if refTarget(get(tpl, "Outputs", "OperatorPolicyArn", "Value")) != "OperatorPolicy" {
		t.Errorf("output OperatorPolicyArn = %v; want !Ref OperatorPolicy (a managed policy's Ref is its ARN)", get(tpl, "Outputs", "OperatorPolicyArn"))
	}
	for _, p := range operatorProblems(tpl) {
		t.Error(p)
	}
	if got := fmt.Sprint(get(translated(t), "Resources", "OperatorPolicy", "Properties")); got != fmt.Sprint(get(tpl, "Resources", "OperatorPolicy", "Properties")) {
		t.Errorf("the translation's OperatorPolicy %s differs from the template's", got)
	}
}

// The check above fails on a policy wider or narrower than the tool's calls.
func TestTemplate_operator_check_names_what_is_too_wide_or_missing(t *testing.T) {
	statement := func(tpl doc, sid string) doc {
		for _, st := range asList(get(tpl, "Resources", "OperatorPolicy", "Properties", "PolicyDocument", "Statement")) {
			if get(st, "Sid") == sid {
				return st.(doc)
			}
		}
		t.Fatalf("no statement %s", sid)
		return nil
	}
	for _, c := range []struct {
		name   string
		mutate func(tpl doc)
		want   string
	}{
		{"an action more", func(tpl doc) {
			s := statement(tpl, "ReadAndDecideTheConsumersItems")
			s["Action"] = append(asList(s["Action"]), "dynamodb:UpdateItem")
		}, "ReadAndDecideTheConsumersItems: actions"},
		{"a key everywhere", func(tpl doc) {
			asMap(asMap(statement(tpl, "ReadAndDecideTheConsumersItems")["Condition"])["ForAllValues:StringLike"])["dynamodb:LeadingKeys"] = []any{"*"}
		}, "leading keys [*]"},
		{"a queue fewer", func(tpl doc) {
			s := statement(tpl, "ReadAndDeleteDeadLetters")
			s["Resource"] = asList(s["Resource"])[1:]
		}, "ReadAndDeleteDeadLetters: resources"},
		{"any resource", func(tpl doc) { statement(tpl, "FindOutboxItems")["Resource"] = "*" }, "want a !GetAtt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tpl := loadTemplate(t)
			c.mutate(tpl)
			got := operatorProblems(tpl)
			if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("problems %q; want one saying %q", got, c.want)
			}
		})
	}
}
