// Command sqs-consumer is a test function: it records each message body in TABLE_NAME as
// "sqs#<body>" and reports a batch item failure for every body containing "fail".
package main

import (
	"context"
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
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			if strings.Contains(m.Body, "fail") {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				continue
			}
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
				"pk":       &types.AttributeValueMemberS{Value: "sqs#" + m.Body},
				"group":    &types.AttributeValueMemberS{Value: m.Attributes["MessageGroupId"]},
				"receives": &types.AttributeValueMemberS{Value: m.Attributes["ApproximateReceiveCount"]},
				"source":   &types.AttributeValueMemberS{Value: m.EventSource + " " + m.EventSourceARN},
			}})
			if err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return resp, nil
	})
}
