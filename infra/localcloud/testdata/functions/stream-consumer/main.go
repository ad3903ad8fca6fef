// Command stream-consumer is a test function: for each INSERT of an item whose pk starts with
// "note#" it writes "seen#<pk>" with the inserted item's text into TABLE_NAME. A note whose
// text is "gate" fails (batch item failure) until an item "gate#<pk>" exists; one whose text
// is "poison" always fails. Any other record is an error: the mapping's filter drops them.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		panic(err)
	}
	db, table := dynamodb.NewFromConfig(cfg), os.Getenv("TABLE_NAME")
	lambda.Start(func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		var resp events.DynamoDBEventResponse
		for _, r := range ev.Records {
			pk := r.Change.Keys["pk"].String()
			if r.EventName != "INSERT" || !strings.HasPrefix(pk, "note#") {
				return resp, fmt.Errorf("record %s %s passed the mapping's filter", r.EventName, pk)
			}
			if r.Change.NewImage["text"].String() == "poison" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
				return resp, nil
			}
			if r.Change.NewImage["text"].String() == "gate" {
				out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
					Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "gate#" + pk}}})
				if err != nil || out.Item == nil {
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
					return resp, nil
				}
			}
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
				"pk":     &types.AttributeValueMemberS{Value: "seen#" + pk},
				"text":   &types.AttributeValueMemberS{Value: r.Change.NewImage["text"].String()},
				"seq":    &types.AttributeValueMemberS{Value: r.Change.SequenceNumber},
				"source": &types.AttributeValueMemberS{Value: r.EventSource + " " + r.EventSourceArn},
			}})
			if err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
				return resp, nil // retry from the first failed record
			}
		}
		return resp, nil
	})
}
