package kinesisbatch_test

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
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
)

type amountAdded struct {
	Account string `json:"account"`
	N       int    `json:"n"`
}

// A whole Lambda function consuming a Kinesis stream of CloudEvents: each event adds its
// amount to its account exactly once, in the order of its partition key, however often Lambda
// delivers the shard; the event's own id is the key, so a producer's retried PutRecord is
// applied once. What can never succeed goes to an SQS queue with its reason, holding its key.
func ExampleNew() {
	var cfg aws.Config // config.LoadDefaultConfig(ctx) of github.com/aws/aws-sdk-go-v2/config, once at init
	r := idempotency.NewRouter()
	idempotency.Route(r, "amount.added", func(_ cloudevent.Event, a amountAdded) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Update("accounts", map[string]string{"pk": a.Account},
			expression.Add(expression.Name("balance"), expression.Value(a.N)))}, nil
	})
	c, err := idempotency.New(dynamodb.NewFromConfig(cfg), r, idempotency.Config{Name: "balances",
		Table: os.Getenv("IDEMPOTENCY_TABLE"), AfterDeadLetter: idempotency.HoldGroup})
	if err != nil {
		log.Fatal(err)
	}
	p, err := kinesisbatch.New(c.Engine(), kinesisbatch.Config{Decoder: kinesisbatch.DecoderFunc(kinesisbatch.CloudEventData),
		Options: batch.Options{DeadLetter: deadletter.New(sqs.NewFromConfig(cfg), os.Getenv("DEAD_LETTER_QUEUE_URL"))}})
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(p.Handle)
}
