package localcloud_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

func TestStart_creates_tables_from_the_template(t *testing.T) {
	ep := cloud(t).Endpoints()
	ctx, db := context.Background(), ep.DynamoDBClient()
	table := ep.Tables["NotesTable"]
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table.Name)})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	if len(d.KeySchema) != 1 || aws.ToString(d.KeySchema[0].AttributeName) != "pk" || d.KeySchema[0].KeyType != ddbtypes.KeyTypeHash {
		t.Errorf("key schema = %+v, want pk HASH", d.KeySchema)
	}
	if s := d.StreamSpecification; s == nil || !aws.ToBool(s.StreamEnabled) || s.StreamViewType != ddbtypes.StreamViewTypeNewAndOldImages {
		t.Errorf("stream = %+v, want NEW_AND_OLD_IMAGES", s)
	}
	if aws.ToString(d.LatestStreamArn) != table.StreamARN || table.StreamARN == "" {
		t.Errorf("stream arn = %q, endpoints say %q", aws.ToString(d.LatestStreamArn), table.StreamARN)
	}
	ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table.Name)})
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; aws.ToString(d.AttributeName) != "expiresAt" || d.TimeToLiveStatus != ddbtypes.TimeToLiveStatusEnabled {
		t.Errorf("ttl = %s %s, want expiresAt ENABLED", aws.ToString(d.AttributeName), d.TimeToLiveStatus)
	}
}

func TestStart_creates_fifo_queues_with_redrive_from_the_template(t *testing.T) {
	ep := cloud(t).Endpoints()
	q, dlq := ep.Queues["NotesQueue"], ep.Queues["NotesDLQ"]
	out, err := ep.SQSClient().GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(q.URL), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	a := out.Attributes
	for k, want := range map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true",
		"VisibilityTimeout": "2", "MessageRetentionPeriod": "3600", "QueueArn": q.ARN} {
		if a[k] != want {
			t.Errorf("%s = %q, want %q", k, a[k], want)
		}
	}
	var rp struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     any    `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(a["RedrivePolicy"]), &rp); err != nil {
		t.Fatalf("RedrivePolicy %q: %v", a["RedrivePolicy"], err)
	}
	if rp.DeadLetterTargetArn != dlq.ARN || dlq.ARN == "" {
		t.Errorf("dead-letter target = %q, want the DLQ %q", rp.DeadLetterTargetArn, dlq.ARN)
	}
	if n, _ := json.Marshal(rp.MaxReceiveCount); string(n) != "2" && string(n) != `"2"` {
		t.Errorf("maxReceiveCount = %s, want 2", n)
	}
	if dlq.Name == "" || dlq.Name[len(dlq.Name)-5:] != ".fifo" {
		t.Errorf("DLQ name %q, want a .fifo name", dlq.Name)
	}
}
