package onceflow_test

import (
	"fmt"
	"slices"
	"testing"
)

// managedPolicies are the statements of the AWS managed policies the SAM translator attaches
// to the functions' roles (a function's logs, its traces, and the event sources' polling):
// AWS's own documents, copied here since the tests call no AWS API. A role with a managed
// policy not listed here fails TestTemplate_roles_attach_only_known_managed_policies: read
// its document in the IAM console or the AWS managed policy reference and add it.
var managedPolicies = map[string][]any{
	"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": {
		doc{"Effect": "Allow", "Action": []any{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"}, "Resource": "*"},
	},
	"arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess": {
		doc{"Effect": "Allow", "Action": []any{"xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
			"xray:GetSamplingTargets", "xray:GetSamplingStatisticSummaries"}, "Resource": []any{"*"}},
	},
	"arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole": {
		doc{"Effect": "Allow", "Action": []any{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes",
			"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"}, "Resource": "*"},
	},
	"arn:aws:iam::aws:policy/service-role/AWSLambdaDynamoDBExecutionRole": {
		doc{"Effect": "Allow", "Action": []any{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator",
			"dynamodb:ListStreams", "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"}, "Resource": "*"},
	},
}

// roleOf is the logical id of the role the translated function fn runs with.
func roleOf(t *testing.T, tpl doc, fn string) string {
	t.Helper()
	role := refTarget(get(tpl, "Resources", fn, "Properties", "Role"))
	if get(tpl, "Resources", role, "Type") != "AWS::IAM::Role" {
		t.Fatalf("%s: its Role %v is not an AWS::IAM::Role of the translation", fn, get(tpl, "Resources", fn, "Properties", "Role"))
	}
	return role
}

// statements are every statement of the role translated function fn runs with: its inline
// policies (the template's Policies, and those SAM adds for event sources and destinations)
// and the managed policies' documents.
func statements(t *testing.T, tpl doc, fn string) (inline, managed []any) {
	t.Helper()
	role := get(tpl, "Resources", roleOf(t, tpl, fn), "Properties")
	for _, pol := range asList(get(role, "Policies")) {
		inline = append(inline, asList(get(pol, "PolicyDocument", "Statement"))...)
	}
	for _, arn := range asList(get(role, "ManagedPolicyArns")) {
		st, ok := managedPolicies[fmt.Sprint(arn)]
		if !ok {
			t.Fatalf("%s: managed policy %v is not one whose document this test knows (managedPolicies)", fn, arn)
		}
		managed = append(managed, st...)
	}
	return inline, managed
}

func allStatements(t *testing.T, tpl doc, fn string) []any {
	t.Helper()
	inline, managed := statements(t, tpl, fn)
	return slices.Concat(inline, managed)
}

func TestTemplate_roles_attach_only_known_managed_policies(t *testing.T) {
	tpl := translated(t)
	fns := resourcesOfType(tpl, "AWS::Lambda::Function")
	if len(fns) == 0 {
		t.Fatal("no AWS::Lambda::Function in the translation")
	}
	for id := range fns {
		if _, managed := statements(t, tpl, id); len(managed) == 0 {
			t.Errorf("%s: no managed policy; want at least its logs'", id)
		}
	}
}
