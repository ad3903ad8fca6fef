package iam_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/iam"
)

type m = map[string]any

func template(props m, globals m) m {
	return m{"Globals": m{"Function": globals}, "Resources": m{"Fn": m{"Type": "AWS::Serverless::Function", "Properties": props}}}
}

// What the transform adds to a role, case by case (the whole templates of this repository are
// compared with the real translator in TestRoles_equal_the_SAM_translators).
func TestRoles_derive_what_the_SAM_transform_adds(t *testing.T) {
	queue := m{"Fn::GetAtt": []any{"Q", "Arn"}}
	tests := []struct {
		name              string
		props, globals    m
		managed           []any
		policies          []string // PolicyName of each inline policy
		firstStatementHas string
	}{
		{"basic execution only", m{}, nil, []any{"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"}, nil, ""},
		{"X-Ray with Tracing from Globals", m{}, m{"Tracing": "Active"},
			[]any{"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole", "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess"}, nil, ""},
		{"no X-Ray with Tracing Disabled", m{"Tracing": "Disabled"}, nil,
			[]any{"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"}, nil, ""},
		{"a managed policy by name, once", m{"Policies": []any{"AWSLambdaBasicExecutionRole", "arn:aws:iam::123456789012:policy/x"}}, nil,
			[]any{"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole", "arn:aws:iam::123456789012:policy/x"}, nil, ""},
		{"a Ref among Policies is a managed policy", m{"Policies": []any{m{"Ref": "Operator"}}}, nil,
			[]any{"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole", m{"Ref": "Operator"}}, nil, ""},
		{"statements and a policy template, named by index", m{"Policies": []any{
			m{"Statement": []any{m{"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": "*"}}},
			m{"SQSSendMessagePolicy": m{"QueueName": "q"}}}}, nil,
			[]any{"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"}, []string{"FnRolePolicy0", "FnRolePolicy1"}, ""},
		{"an SQS source's execution role and its destination statement", m{"Events": m{"E": m{"Type": "DynamoDB", "Properties": m{
			"Stream": "s", "DestinationConfig": m{"OnFailure": m{"Type": "SQS", "Destination": queue}}}}}}, nil,
			[]any{"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole", "arn:aws:iam::aws:policy/service-role/AWSLambdaDynamoDBExecutionRole"},
			[]string{"FnESQSPolicy"}, "sqs:SendMessage"},
		{"a destination without Type adds nothing", m{"Events": m{"E": m{"Type": "SQS", "Properties": m{"Queue": queue,
			"DestinationConfig": m{"OnFailure": m{"Destination": queue}}}}}}, nil,
			[]any{"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole", "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			roles, err := iam.Roles(template(tt.props, tt.globals))
			if err != nil {
				t.Fatal(err)
			}
			r := roles["Fn"]
			if r.LogicalID != "FnRole" || !reflect.DeepEqual(r.ManagedPolicyArns, tt.managed) {
				t.Errorf("role %s managed %v; want FnRole, %v", r.LogicalID, r.ManagedPolicyArns, tt.managed)
			}
			var names []string
			for _, p := range r.Policies {
				names = append(names, p.(map[string]any)["PolicyName"].(string))
			}
			if !reflect.DeepEqual(names, tt.policies) {
				t.Errorf("inline policies %v; want %v", names, tt.policies)
			}
			if tt.firstStatementHas != "" {
				if got := r.Policies[0].(map[string]any)["PolicyDocument"]; !strings.Contains(fmtValue(got), tt.firstStatementHas) {
					t.Errorf("first inline policy %v; want %s", got, tt.firstStatementHas)
				}
			}
		})
	}
}

func fmtValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// What the transform would do and the derivation does not know is an error, never a guess.
func TestRoles_refuse_what_they_do_not_derive(t *testing.T) {
	tests := []struct {
		name  string
		props m
		want  string
	}{
		{"a role of the function's own", m{"Role": "arn:aws:iam::1:role/r"}, "Role: not derived here"},
		{"a dead-letter queue", m{"DeadLetterQueue": m{"Type": "SQS", "TargetArn": "x"}}, "DeadLetterQueue"},
		{"an unknown policy template", m{"Policies": []any{m{"NoSuchPolicy": m{}}}}, "policy template NoSuchPolicy"},
		{"a policy template without its parameter", m{"Policies": []any{m{"SQSPollerPolicy": m{}}}}, "no value for [QueueName]"},
		{"an unknown managed policy name", m{"Policies": []any{"AmazonDynamoDBFullAccess"}}, "give its ARN"},
		{"an event source it does not know", m{"Events": m{"E": m{"Type": "MSK"}}}, `event source type "MSK"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := iam.Roles(template(tt.props, nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v; want one saying %q", err, tt.want)
			}
		})
	}
}
