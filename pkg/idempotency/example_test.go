package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
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

type account struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
}

// A consumer's logic is a Router of pure decisions: each event type's data is decoded and
// validated, and its effect returned as writes. The engine commits them with the idempotency
// record (see sqsbatch.NewConsumer for the whole Lambda function).
func Example() {
	r := idempotency.NewRouter()
	idempotency.Route(r, "account.credited", func(ev cloudevent.Event, c credit) (idempotency.Effect, error) {
		return idempotency.Effect{
			idempotency.Update("app", account{PK: "ACCOUNT#" + c.AccountID, SK: "ACCOUNT"},
				expression.Add(expression.Name("balance"), expression.Value(c.Amount))),
		}, nil
	})

	ev, _ := cloudevent.New("credit-1", "bank/api", "account.credited", "acc-1", time.Now(), credit{AccountID: "acc-1", Amount: 5})
	effect, _ := r.Decide(context.Background(), ev)
	w, _ := effect[0].TransactWriteItem()
	fmt.Println(aws.ToString(w.Update.TableName), strings.TrimSpace(aws.ToString(w.Update.UpdateExpression)))

	bad, _ := cloudevent.New("credit-2", "bank/api", "account.credited", "acc-1", time.Now(), credit{AccountID: "acc-1", Amount: 0})
	_, err := r.Decide(context.Background(), bad)
	fmt.Println(idempotency.IsPermanent(err), err)
	// Output:
	// app ADD #0 :0
	// true malformed message: data.amount: must be a positive integer, got 0
}

// A conditional write with a business reason: when the condition fails, the event is
// recorded as rejected with the reason, and nothing of its effect is applied.
func ExampleWrite_OrReject() {
	amount := int64(30)
	debit := idempotency.Update("app", account{PK: "ACCOUNT#acc-1", SK: "ACCOUNT"},
		expression.Add(expression.Name("balance"), expression.Value(-amount))).
		If(expression.Name("balance").GreaterThanEqual(expression.Value(amount))).
		OrReject("insufficient funds")

	w, err := debit.TransactWriteItem()
	fmt.Println(aws.ToString(w.Update.ConditionExpression), err)
	fmt.Println(debit.Reason())
	// Output:
	// #c0x0 >= :c0x0 <nil>
	// insufficient funds
}

// Permanent is the one rule for "never retry this": the message is dead-lettered with the error
// as its reason. Every other error is retried.
func ExamplePermanent() {
	errUnknownAccount := errors.New("account acc-9 is closed")
	err := fmt.Errorf("decide credit-3: %w", idempotency.Permanent(errUnknownAccount))
	fmt.Println(idempotency.IsPermanent(err), errors.Is(err, errUnknownAccount))
	fmt.Println(idempotency.IsPermanent(errors.New("throttled")))
	// Output:
	// true true
	// false
}

// The idempotency key of an event for a consumer: the record's key, and what an effect outside
// DynamoDB passes downstream.
func ExampleKey() {
	fmt.Println(operator.Key("orders", "order-placed-42"))
	// Output: orders#order-placed-42
}
