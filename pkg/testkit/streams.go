package testkit

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
)

// StreamTable creates a table with string keys pk and sk and a stream of new images, named
// prefix and a unique suffix, deletes it when the test ends, and returns its name and its
// stream's ARN.
func StreamTable(tb testing.TB, db *dynamodb.Client, prefix string) (name, streamARN string) {
	tb.Helper()
	in := keyed(prefix, "pk", "sk")
	in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	name = CreateTable(tb, db, in)
	out, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		tb.Fatalf("describe table %s: %v", name, err)
	}
	return name, aws.ToString(out.Table.LatestStreamArn)
}

// Streams returns a DynamoDB Streams client for DynamoDB Local, which serves streams at its
// own endpoint; opts adjust it. See Emulator for when it starts DynamoDB Local or skips the
// test.
func Streams(tb testing.TB, opts ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	tb.Helper()
	url := Emulator(tb, EndpointVariable)
	return dynamodbstreams.NewFromConfig(Config(), append([]func(*dynamodbstreams.Options){func(o *dynamodbstreams.Options) {
		o.BaseEndpoint = aws.String(url)
	}}, opts...)...)
}

// StreamRecords reads every record of the stream so far, every shard from its oldest record,
// shaped as Lambda delivers them (dynamodbbatch.EventOf).
func StreamRecords(tb testing.TB, client *dynamodbstreams.Client, streamARN string) []events.DynamoDBEventRecord {
	tb.Helper()
	ctx := context.Background()
	desc, err := client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &streamARN})
	if err != nil {
		tb.Fatalf("describe stream: %v", err)
	}
	var recs []events.DynamoDBEventRecord
	for _, sh := range desc.StreamDescription.Shards {
		it, err := client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &streamARN,
			ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			tb.Fatalf("shard iterator: %v", err)
		}
		for iter := it.ShardIterator; iter != nil; {
			out, err := client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				tb.Fatalf("get records: %v", err)
			}
			ev, err := dynamodbbatch.EventOf(out.Records, streamARN)
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
