package dynamodbbatch_test

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// A whole Lambda function consuming an orders table's stream: each insert or modify of an
// order (the default decoder: the record's eventID is the key) counts the order's status in a
// report table exactly once, in the order of each order's changes, however often Lambda
// delivers the shard. A removal is routed nowhere: it is ignored and counted, not written (an
// event source mapping's FilterCriteria spares its invocation). What can never succeed goes to
// an SQS queue with its reason.
func ExampleNew() {
	var cfg aws.Config                                                                              // config.LoadDefaultConfig(ctx) of github.com/aws/aws-sdk-go-v2/config, once at init
	count := func(_ cloudevent.Event, ch events.DynamoDBStreamRecord) (idempotency.Effect, error) { // the default decoder's data
		return idempotency.Effect{idempotency.Update("report", map[string]string{"pk": "STATUS#" + ch.NewImage["status"].String()},
			expression.Add(expression.Name("orders"), expression.Value(1)))}, nil
	}
	router := idempotency.NewRouter()
	idempotency.Route(router, dynamodbbatch.Insert, count)
	idempotency.Route(router, dynamodbbatch.Modify, count)
	c, err := idempotency.New(dynamodb.NewFromConfig(cfg), router, idempotency.Config{Name: "order-report",
		Table: os.Getenv("IDEMPOTENCY_TABLE")})
	if err != nil {
		log.Fatal(err)
	}
	p, err := dynamodbbatch.New(c.Engine(), dynamodbbatch.Config{
		Options: batch.Options{DeadLetter: deadletter.New(sqs.NewFromConfig(cfg), os.Getenv("DEAD_LETTER_QUEUE_URL"))}})
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(p.Handle)
}
