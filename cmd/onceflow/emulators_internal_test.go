package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// The tool's tests reach DynamoDB Local and fauxqs themselves, as the tool does: with the
// helpers below, not the local cloud's harness or the application's test helpers, so that the
// tests link what the tool links.

var seq atomic.Int64

// uniqueName is a table or queue name unique across tests and runs.
func uniqueName(prefix string) string {
	return fmt.Sprintf("cli-%s-%d-%d", prefix, time.Now().UnixNano()%1e9, seq.Add(1))
}

func emulator(t *testing.T, env string) string {
	t.Helper()
	return testkit.Emulator(t, env)
}

var emulatorConfig = aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}

func dynamoDB(t *testing.T) *dynamodb.Client {
	url := emulator(t, testkit.EndpointVariable)
	return dynamodb.NewFromConfig(emulatorConfig, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(url) })
}

func sqsClient(t *testing.T) *sqs.Client {
	url := emulator(t, testkit.SQSEndpointVariable)
	return sqs.NewFromConfig(emulatorConfig, func(o *sqs.Options) { o.BaseEndpoint = aws.String(url) })
}

// createTable creates an on-demand table with string keys (hash, then range), waits until it
// is active and deletes it when the test ends.
func createTable(t *testing.T, db *dynamodb.Client, prefix string, keys ...string) string {
	t.Helper()
	name := uniqueName(prefix)
	in := &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest}
	for i, k := range keys {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(k), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(k), KeyType: map[bool]types.KeyType{true: types.KeyTypeHash, false: types.KeyTypeRange}[i == 0]})
	}
	if _, err := db.CreateTable(t.Context(), in); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 30*time.Second); err != nil {
		t.Fatalf("wait for table %s: %v", name, err)
	}
	t.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

// fifoQueue creates a FIFO queue without content-based deduplication and returns its URL.
func fifoQueue(t *testing.T, c *sqs.Client, prefix string) string {
	t.Helper()
	out, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(uniqueName(prefix) + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "VisibilityTimeout": "30"}})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	url := aws.ToString(out.QueueUrl)
	t.Cleanup(func() { _, _ = c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: &url}) })
	return url
}

// drain receives and deletes every message of the queue until a receive comes back empty.
func drain(t *testing.T, c *sqs.Client, url string) []sqstypes.Message {
	t.Helper()
	var all []sqstypes.Message
	for {
		out, err := c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatalf("receive from %s: %v", url, err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		for _, m := range out.Messages {
			if _, err := c.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("delete message: %v", err)
			}
		}
		all = append(all, out.Messages...)
	}
}
