package testenv

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/onceflow/onceflow/internal/localaws"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// AppTable creates an app table (string keys pk and sk, stream with new images) and returns
// its name and stream ARN. It is deleted when the test ends.
func AppTable(tb testing.TB, db *dynamodb.Client) (string, string) {
	tb.Helper()
	name := Name("app")
	ctx := context.Background()
	out, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage},
	})
	if err != nil {
		tb.Fatalf("create app table %s: %v", name, err)
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 30*time.Second); err != nil {
		tb.Fatalf("wait for table %s: %v", name, err)
	}
	tb.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name, aws.ToString(out.TableDescription.LatestStreamArn)
}

// Streams returns a DynamoDB Streams client for DynamoDB Local.
func Streams(tb testing.TB) *dynamodbstreams.Client {
	tb.Helper()
	url := testkit.Emulator(tb, testkit.EndpointVariable)
	return dynamodbstreams.NewFromConfig(Config(), func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(url) })
}

// FIFOQueue creates a FIFO queue (no content-based deduplication) and returns its URL.
func FIFOQueue(tb testing.TB, client *sqs.Client, prefix string) string {
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

// Drain receives and deletes every message of the queue until a receive comes back empty.
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

// StreamRecords reads every record of the stream so far, shaped as Lambda delivers them.
func StreamRecords(tb testing.TB, client *dynamodbstreams.Client, arn string) []events.DynamoDBEventRecord {
	tb.Helper()
	ctx := context.Background()
	desc, err := client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &arn})
	if err != nil {
		tb.Fatalf("describe stream: %v", err)
	}
	var recs []events.DynamoDBEventRecord
	for _, sh := range desc.StreamDescription.Shards {
		it, err := client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &arn,
			ShardId: sh.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			tb.Fatalf("shard iterator: %v", err)
		}
		iter := it.ShardIterator
		for iter != nil {
			out, err := client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				tb.Fatalf("get records: %v", err)
			}
			ev, err := localaws.DynamoDBEvent(out.Records, arn)
			if err != nil {
				tb.Fatalf("stream records: %v", err)
			}
			recs = append(recs, ev.Records...)
			if len(out.Records) == 0 {
				break
			}
			iter = out.NextShardIterator
		}
	}
	return recs
}

// Root is the repository root, for reading events/ and template.yaml.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// SQSEvent shapes received messages as the Lambda event source mapping delivers them: it is
// localaws.SQSEvent, the local cloud's SQS poller's own.
func SQSEvent(msgs []sqstypes.Message, queueARN string) events.SQSEvent {
	return localaws.SQSEvent(msgs, queueARN)
}

// Parameters starts the local SSM parameter store (localaws) serving values (name to value) and
// returns a client of it. The store stops when the test ends.
func Parameters(tb testing.TB, values map[string]string) *ssm.Client {
	tb.Helper()
	store, err := localaws.StartParameterStore(values)
	if err != nil {
		tb.Fatalf("start the parameter store: %v", err)
	}
	tb.Cleanup(func() { _ = store.Close() })
	return ssm.NewFromConfig(Config(), func(o *ssm.Options) { o.BaseEndpoint = aws.String(store.URL) })
}

// SampleEvent decodes the sample events/<name> into v, as it is written.
func SampleEvent(tb testing.TB, name string, v any) {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), "events", name))
	if err != nil {
		tb.Fatalf("read sample event: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("decode sample event %s: %v", name, err)
	}
}
