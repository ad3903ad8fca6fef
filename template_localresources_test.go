package onceflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// queueDefaults are SQS's values of the attributes a template may leave out.
var queueDefaults = map[string]string{"FifoQueue": "false", "VisibilityTimeout": "30", "MessageRetentionPeriod": "345600"}

// compareQueues compares each queue's attributes as the emulator reports them with the
// translation's properties. Encryption at rest (SqsManagedSseEnabled) is not emulated.
func compareQueues(ctx context.Context, t *testing.T, tr *translation, e localcloud.Endpoints) {
	client := e.SQSClient()
	queues := resourcesOfType(tr.doc, "AWS::SQS::Queue")
	if len(queues) != len(e.Queues) {
		t.Errorf("the translation deploys %d queues, the local cloud created %d", len(queues), len(e.Queues))
	}
	for id, q := range queues {
		local, ok := e.Queues[id]
		if !ok {
			t.Errorf("%s: not created by the local cloud", id)
			continue
		}
		p := asMap(tr.resolve(get(q, "Properties")))
		want := maps.Clone(queueDefaults)
		for _, a := range []string{"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit",
			"VisibilityTimeout", "MessageRetentionPeriod"} {
			if v, ok := p[a]; ok {
				want[a] = scalarString(v)
			}
		}
		if rp, ok := p["RedrivePolicy"]; ok {
			want["RedrivePolicy"] = fmt.Sprintf("%v/%d", get(rp, "deadLetterTargetArn"), num(get(rp, "maxReceiveCount")))
		}
		out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(local.URL),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		got := map[string]string{}
		for a := range want {
			if v, ok := out.Attributes[a]; ok {
				got[a] = v
			}
		}
		if raw, ok := out.Attributes["RedrivePolicy"]; ok {
			var rp struct {
				DeadLetterTargetArn string
				MaxReceiveCount     json.Number
			}
			if err := json.Unmarshal([]byte(raw), &rp); err != nil {
				t.Fatalf("%s: RedrivePolicy %s: %v", id, raw, err)
			}
			got["RedrivePolicy"] = fmt.Sprintf("%s/%s", rp.DeadLetterTargetArn, rp.MaxReceiveCount)
		}
		if got["FifoQueue"] == "" {
			got["FifoQueue"] = "false" // SQS reports FifoQueue of FIFO queues only
		}
		if !maps.Equal(want, got) {
			t.Errorf("%s: attributes locally\n  %v\nthe translation's\n  %v", id, got, want)
		}
	}
}

// scalarString writes a template scalar as SQS writes attributes (JSON numbers as integers).
func scalarString(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprint(v)
}

// compareTables compares each table's keys, stream and time to live as DynamoDB Local
// describes them with the translation's properties.
func compareTables(ctx context.Context, t *testing.T, tr *translation, e localcloud.Endpoints) {
	client := e.DynamoDBClient()
	tables := resourcesOfType(tr.doc, "AWS::DynamoDB::Table")
	if len(tables) != len(e.Tables) {
		t.Errorf("the translation deploys %d tables, the local cloud created %d", len(tables), len(e.Tables))
	}
	for id, tb := range tables {
		local, ok := e.Tables[id]
		if !ok {
			t.Errorf("%s: not created by the local cloud", id)
			continue
		}
		p := asMap(tr.resolve(get(tb, "Properties")))
		want := doc{"keys": fmt.Sprint(p["KeySchema"]), "attributes": fmt.Sprint(p["AttributeDefinitions"]),
			"stream": fmt.Sprint(get(p, "StreamSpecification", "StreamViewType")), "ttl": "<nil>"}
		if get(p, "TimeToLiveSpecification", "Enabled") == true {
			want["ttl"] = fmt.Sprint(get(p, "TimeToLiveSpecification", "AttributeName"))
		}
		d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(local.Name)})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(local.Name)})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		var keys, attrs []any
		for _, k := range d.Table.KeySchema {
			keys = append(keys, doc{"AttributeName": aws.ToString(k.AttributeName), "KeyType": string(k.KeyType)})
		}
		for _, a := range d.Table.AttributeDefinitions {
			attrs = append(attrs, doc{"AttributeName": aws.ToString(a.AttributeName), "AttributeType": string(a.AttributeType)})
		}
		got := doc{"keys": fmt.Sprint(keys), "attributes": fmt.Sprint(attrs), "stream": "<nil>", "ttl": "<nil>"}
		if s := d.Table.StreamSpecification; s != nil && aws.ToBool(s.StreamEnabled) {
			got["stream"] = string(s.StreamViewType)
		}
		if ts := ttl.TimeToLiveDescription; ts != nil && (ts.TimeToLiveStatus == "ENABLED" || ts.TimeToLiveStatus == "ENABLING") {
			got["ttl"] = aws.ToString(ts.AttributeName)
		}
		if !maps.Equal(want, got) {
			t.Errorf("%s: locally %v; the translation's %v", id, got, want)
		}
	}
}
