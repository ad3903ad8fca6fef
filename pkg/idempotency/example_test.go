package idempotency_test

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

type credit struct {
	AccountID string `json:"accountId"`
	Amount    int64  `json:"amount"`
}

// Validate makes a non-positive amount a malformed message, named by its field.
func (c credit) Validate() error {
	if c.Amount <= 0 {
		return cloudevent.Malformed("data.amount", "must be a positive integer, got %d", c.Amount)
	}
	return nil
}

// A consumer is a Router of pure decisions, wrapped by the engine and the batch processor.
func Example() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err) // in main, at init: never on the handler path
	}
	db := dynamodb.NewFromConfig(cfg)

	r := idempotency.NewRouter()
	idempotency.Route(r, "account.credited", func(ev cloudevent.Event, c credit) (idempotency.Effect, error) {
		expr, err := expression.NewBuilder().
			WithUpdate(expression.Add(expression.Name("balance"), expression.Value(c.Amount))).Build()
		if err != nil {
			return idempotency.Effect{}, err
		}
		return idempotency.Effect{Writes: []idempotency.Write{{TransactWriteItem: types.TransactWriteItem{
			Update: &types.Update{
				TableName: aws.String("app"),
				Key: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: "ACCOUNT#" + c.AccountID},
					"sk": &types.AttributeValueMemberS{Value: "BALANCE"},
				},
				UpdateExpression:          expr.Update(),
				ExpressionAttributeNames:  expr.Names(),
				ExpressionAttributeValues: expr.Values(),
			}}}}}, nil
	})

	consumer, err := idempotency.New(db, r, idempotency.Config{Name: "ledger", Table: "idempotency"})
	if err != nil {
		log.Fatal(err)
	}
	processor, err := sqsbatch.New(consumer, sqsbatch.Config{})
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(processor.Handle)
}
