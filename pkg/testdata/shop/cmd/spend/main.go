// Command spend is the Lambda function of the shop's spend consumer: the whole of it.
package main

import (
	"context"
	"log"
	"os"

	"example.com/shop"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	p, err := sqsbatch.NewConsumer(dynamodb.NewFromConfig(cfg), shop.Handler(os.Getenv("TABLE")),
		idempotency.Config{Name: "spend", Table: os.Getenv("IDEMPOTENCY_TABLE")},
		sqsbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(sqs.NewFromConfig(cfg), os.Getenv("DEAD_LETTER_QUEUE_URL"))}})
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(p.Handle)
}
