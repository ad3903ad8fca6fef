package testkit

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// CreateFIFOQueue creates a FIFO queue named prefix and a unique suffix (no content-based
// deduplication, visibility timeout 30 s) in the SQS emulator, deletes it when the test ends,
// and returns its URL.
func CreateFIFOQueue(tb testing.TB, client *sqs.Client, prefix string) string {
	tb.Helper()
	out, err := client.CreateQueue(context.Background(), &sqs.CreateQueueInput{
		QueueName:  aws.String(Name(prefix) + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "VisibilityTimeout": "30"},
	})
	if err != nil {
		tb.Fatalf("create queue: %v", err)
	}
	url := aws.ToString(out.QueueUrl)
	tb.Cleanup(func() { _, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: &url}) })
	return url
}

// Drain receives and deletes every message of the queue at url, with its system and message
// attributes, until a receive comes back empty, and returns them.
func Drain(tb testing.TB, client *sqs.Client, url string) []sqstypes.Message {
	tb.Helper()
	var all []sqstypes.Message
	for {
		out, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url,
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"},
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			tb.Fatalf("receive from %s: %v", url, err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		for _, m := range out.Messages {
			if _, err := client.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				tb.Fatalf("delete message: %v", err)
			}
		}
		all = append(all, out.Messages...)
	}
}
