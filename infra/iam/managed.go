package iam

import (
	"sort"
	"strings"
)

// logs are the CloudWatch Logs actions of a function's own log group.
var logs = []any{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"}

// managedDocuments are the documents of the AWS managed policies the SAM transform attaches to
// a function's execution role (its logs, its traces, and each kind of event source's polling),
// as AWS publishes them (the AWS managed policy reference), pinned: the local cloud evaluates
// them and the template's tests read them, and neither calls IAM. A role that attaches a
// managed policy not pinned here is refused by both (ManagedDocument): read its document in
// the reference and add it.
var managedDocuments = map[string]map[string]any{
	"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": statements(
		map[string]any{"Effect": "Allow", "Action": logs, "Resource": "*"}),
	"arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess": statements(
		map[string]any{"Effect": "Allow", "Action": []any{"xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules",
			"xray:GetSamplingTargets", "xray:GetSamplingStatisticSummaries"}, "Resource": []any{"*"}}),
	"arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole": statements(
		map[string]any{"Effect": "Allow", "Action": append([]any{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}, logs...), "Resource": "*"}),
	"arn:aws:iam::aws:policy/service-role/AWSLambdaDynamoDBExecutionRole": statements(
		map[string]any{"Effect": "Allow", "Action": append([]any{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator",
			"dynamodb:ListStreams"}, logs...), "Resource": "*"}),
	"arn:aws:iam::aws:policy/service-role/AWSLambdaKinesisExecutionRole": statements(
		map[string]any{"Effect": "Allow", "Action": append([]any{"kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords",
			"kinesis:GetShardIterator", "kinesis:ListShards", "kinesis:ListStreams", "kinesis:SubscribeToShard"}, logs...), "Resource": "*"}),
}

func statements(sts ...any) map[string]any {
	return map[string]any{"Version": "2012-10-17", "Statement": sts}
}

// ManagedDocument returns the pinned document of the AWS managed policy arn (a copy the caller
// may change), and whether it is pinned.
func ManagedDocument(arn string) (map[string]any, bool) {
	doc, ok := managedDocuments[arn]
	if !ok {
		return nil, false
	}
	return deepCopy(doc).(map[string]any), true
}

// ManagedPolicyARNs returns the ARNs of the pinned AWS managed policies, sorted.
func ManagedPolicyARNs() []string {
	out := make([]string, 0, len(managedDocuments))
	for arn := range managedDocuments {
		out = append(out, arn)
	}
	sort.Strings(out)
	return out
}

// managedARN is the ARN of a pinned AWS managed policy given by name (as a template's
// Policies may name one: AWSLambdaBasicExecutionRole), or "".
func managedARN(name string) string {
	for arn := range managedDocuments {
		if strings.HasSuffix(arn, "/"+name) {
			return arn
		}
	}
	return ""
}

// deepCopy copies a JSON-shaped value (objects and lists copied, scalars shared).
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
