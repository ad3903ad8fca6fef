package sqsbatch_test

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

type orderPlaced struct {
	OrderID    string `json:"orderId"`
	CustomerID string `json:"customerId"`
	Total      int64  `json:"total"`
}

type key struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
}

// A whole Lambda function consuming an SQS FIFO queue: each order.placed event adds its total
// to the customer's spend exactly once, however often SQS delivers it. What can never succeed
// goes to the dead-letter queue with its reason.
func ExampleNewConsumer() {
	var cfg aws.Config // config.LoadDefaultConfig(ctx) of github.com/aws/aws-sdk-go-v2/config, once at init
	orders := idempotency.NewRouter()
	idempotency.Route(orders, "order.placed", func(ev cloudevent.Event, o orderPlaced) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Update("shop", key{PK: "CUSTOMER#" + o.CustomerID, SK: "SPEND"},
			expression.Add(expression.Name("total"), expression.Value(o.Total)))}, nil
	})
	p, err := sqsbatch.NewConsumer(dynamodb.NewFromConfig(cfg), orders,
		idempotency.Config{Name: "customer-spend", Table: os.Getenv("IDEMPOTENCY_TABLE")},
		sqsbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(sqs.NewFromConfig(cfg), os.Getenv("DEAD_LETTER_QUEUE_URL"))}})
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(p.Handle)
}
