package localcloud_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/testkit"
)

func traceAttr(h string) map[string]sqstypes.MessageSystemAttributeValue {
	return map[string]sqstypes.MessageSystemAttributeValue{"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(h)}}
}

func TestSQSPoller_passes_each_messages_AWSTraceHeader_in_the_SQS_event(t *testing.T) {
	ep := cloud(t).Endpoints()
	ctx, q := context.Background(), ep.SQSClient()
	queue := ep.Queues["NotesQueue"]
	id := fmt.Sprint(time.Now().UnixNano())
	h1, h2, h3 := "Root=1-00000001-"+id+";Sampled=1", "Root=1-00000002-"+id+";Sampled=1", "Root=1-00000003-"+id+";Sampled=1"
	send := func(body, h string) {
		if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queue.URL), MessageBody: aws.String(body),
			MessageGroupId: aws.String("trace-" + id), MessageSystemAttributes: traceAttr(h)}); err != nil {
			t.Fatal(err)
		}
	}
	send("single-"+id, h1)
	send("single-"+id, h3) // deduplicated by content: the first message, and its trace, stay
	out, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queue.URL), Entries: []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("batch-a-" + id), MessageGroupId: aws.String("trace-a-" + id), MessageSystemAttributes: traceAttr(h2)},
		{Id: aws.String("b"), MessageBody: aws.String("batch-b-" + id), MessageGroupId: aws.String("trace-b-" + id)},
	}})
	if err != nil || len(out.Failed) != 0 {
		t.Fatalf("send batch: %v %v", out, err)
	}
	want := map[string]string{"single-" + id: h1, "batch-a-" + id: h2, "batch-b-" + id: ""}
	for body, h := range want {
		testkit.Eventually(t, 20*time.Second, func() error {
			item, err := getItem(ep, "sqs#"+body)
			if err != nil {
				return err
			}
			if got := str(item, "trace"); got != h {
				return fmt.Errorf("%s reached the function with AWSTraceHeader %q, want %q", body, got, h)
			}
			return nil
		})
	}
}
