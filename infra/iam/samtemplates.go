package iam

import (
	"fmt"
	"slices"
)

// policyTemplate is one of SAM's policy templates: its parameters and its statements, in which
// {"Ref": parameter} stands for the value the template's Policies give.
type policyTemplate struct {
	params     []string
	statements []any
}

func arnSub(format, variable, param string) map[string]any {
	return map[string]any{"Fn::Sub": []any{format, map[string]any{variable: map[string]any{"Ref": param}}}}
}

var (
	tableARN = "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${tableName}"
	tableRes = []any{arnSub(tableARN, "tableName", "TableName"), arnSub(tableARN+"/index/*", "tableName", "TableName")}
	queueRes = arnSub("arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:${queueName}", "queueName", "QueueName")
	bucket   = "arn:${AWS::Partition}:s3:::${bucketName}"
)

func allow(actions []any, resource any) map[string]any {
	return map[string]any{"Effect": "Allow", "Action": actions, "Resource": resource}
}

// policyTemplates are the SAM policy templates the local cloud derives (their definitions as
// aws-sam-translator's policy_templates.json has them); a template naming another one is
// refused with this list. Add one by its definition there, and a template that uses it to the
// roles' comparison with the translator (TestRoles_equal_the_SAM_translators).
var policyTemplates = map[string]policyTemplate{
	"SQSPollerPolicy": {params: []string{"QueueName"}, statements: []any{allow([]any{"sqs:ChangeMessageVisibility",
		"sqs:ChangeMessageVisibilityBatch", "sqs:DeleteMessage", "sqs:DeleteMessageBatch", "sqs:GetQueueAttributes",
		"sqs:ReceiveMessage"}, queueRes)}},
	"SQSSendMessagePolicy": {params: []string{"QueueName"}, statements: []any{allow([]any{"sqs:SendMessage*"}, queueRes)}},
	"KMSDecryptPolicy": {params: []string{"KeyId"}, statements: []any{map[string]any{"Effect": "Allow", "Action": "kms:Decrypt",
		"Resource": arnSub("arn:${AWS::Partition}:kms:${AWS::Region}:${AWS::AccountId}:key/${keyId}", "keyId", "KeyId")}}},
	"DynamoDBCrudPolicy": {params: []string{"TableName"}, statements: []any{allow([]any{"dynamodb:GetItem", "dynamodb:DeleteItem",
		"dynamodb:PutItem", "dynamodb:Scan", "dynamodb:Query", "dynamodb:UpdateItem", "dynamodb:BatchWriteItem",
		"dynamodb:BatchGetItem", "dynamodb:DescribeTable", "dynamodb:ConditionCheckItem"}, tableRes)}},
	"DynamoDBReadPolicy": {params: []string{"TableName"}, statements: []any{allow([]any{"dynamodb:GetItem", "dynamodb:Scan",
		"dynamodb:Query", "dynamodb:BatchGetItem", "dynamodb:DescribeTable"}, tableRes)}},
	"DynamoDBWritePolicy": {params: []string{"TableName"}, statements: []any{allow([]any{"dynamodb:PutItem",
		"dynamodb:UpdateItem", "dynamodb:BatchWriteItem"}, tableRes)}},
	"S3ReadPolicy": {params: []string{"BucketName"}, statements: []any{allow([]any{"s3:GetObject", "s3:ListBucket",
		"s3:GetBucketLocation", "s3:GetObjectVersion", "s3:GetLifecycleConfiguration"},
		[]any{arnSub(bucket, "bucketName", "BucketName"), arnSub(bucket+"/*", "bucketName", "BucketName")})}},
}

// expandTemplate returns the policy document of SAM policy template name with params (the
// template's value for it: an object of parameter values), as the transform writes it.
func expandTemplate(name string, params any) (map[string]any, error) {
	t, ok := policyTemplates[name]
	if !ok {
		return nil, fmt.Errorf("policy template %s is not derived here (known: %v)", name, sortedKeys(policyTemplates))
	}
	values, _ := params.(map[string]any)
	var missing []string
	for _, p := range t.params {
		if _, ok := values[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("policy template %s: no value for %v", name, missing)
	}
	// Only the template's own parameters are substituted; others are ignored, as the transform does.
	own := map[string]any{}
	for p, v := range values {
		if slices.Contains(t.params, p) {
			own[p] = v
		}
	}
	return map[string]any{"Statement": substitute(deepCopy(t.statements), own)}, nil
}

// substitute replaces each {"Ref": p} of a parameter p by its value.
func substitute(v any, values map[string]any) any {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["Ref"].(string); ok && len(x) == 1 {
			if val, ok := values[ref]; ok {
				return deepCopy(val)
			}
		}
		for k, e := range x {
			x[k] = substitute(e, values)
		}
	case []any:
		for i, e := range x {
			x[i] = substitute(e, values)
		}
	}
	return v
}
