package samtest

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

// CompareQueues compares each queue's attributes as the emulator reports them with the
// translation's properties. Encryption at rest (SqsManagedSseEnabled) is not emulated.
func CompareQueues(ctx context.Context, t testing.TB, r *Resolver, e localcloud.Endpoints) {
	t.Helper()
	client := e.SQSClient()
	queues := resourcesOfType(r.doc, "AWS::SQS::Queue")
	if len(queues) != len(e.Queues) {
		t.Errorf("the translation deploys %d queues, the local cloud created %d", len(queues), len(e.Queues))
	}
	for id, q := range queues {
		local, ok := e.Queues[id]
		if !ok {
			t.Errorf("%s: not created by the local cloud", id)
			continue
		}
		props := asMap(get(q, "Properties"))
		want := maps.Clone(queueDefaults)
		for _, a := range []string{"FifoQueue", "ContentBasedDeduplication", "DeduplicationScope", "FifoThroughputLimit",
			"VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds", "MaximumMessageSize", "ReceiveMessageWaitTimeSeconds"} {
			if v, ok := props[a]; ok {
				want[a] = scalar(r.Resolve(v))
			}
		}
		if rp, ok := props["RedrivePolicy"]; ok {
			rp := r.Resolve(rp)
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

// CompareTables compares each table's keys, stream and time to live as DynamoDB Local
// describes them with the translation's properties.
func CompareTables(ctx context.Context, t testing.TB, r *Resolver, e localcloud.Endpoints) {
	t.Helper()
	client := e.DynamoDBClient()
	tables := resourcesOfType(r.doc, "AWS::DynamoDB::Table")
	if len(tables) != len(e.Tables) {
		t.Errorf("the translation deploys %d tables, the local cloud created %d", len(tables), len(e.Tables))
	}
	for id, tb := range tables {
		local, ok := e.Tables[id]
		if !ok {
			t.Errorf("%s: not created by the local cloud", id)
			continue
		}
		props := asMap(get(tb, "Properties"))
		p := asMap(r.Resolve(Doc{"KeySchema": props["KeySchema"], "AttributeDefinitions": props["AttributeDefinitions"],
			"StreamSpecification": props["StreamSpecification"], "TimeToLiveSpecification": props["TimeToLiveSpecification"]}))
		want := map[string]string{"keys": fmt.Sprint(p["KeySchema"]), "attributes": fmt.Sprint(p["AttributeDefinitions"]),
			"stream": "-", "ttl": "-"}
		if v, ok := get(p, "StreamSpecification", "StreamViewType").(string); ok {
			want["stream"] = v
		}
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
			keys = append(keys, Doc{"AttributeName": aws.ToString(k.AttributeName), "KeyType": string(k.KeyType)})
		}
		for _, a := range d.Table.AttributeDefinitions {
			attrs = append(attrs, Doc{"AttributeName": aws.ToString(a.AttributeName), "AttributeType": string(a.AttributeType)})
		}
		got := map[string]string{"keys": fmt.Sprint(keys), "attributes": fmt.Sprint(attrs), "stream": "-", "ttl": "-"}
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
