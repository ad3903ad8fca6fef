package ledger_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// TestCredit_that_would_overflow_the_balance_is_rejected_with_a_reason commits credits on an
// account whose balance is near math.MaxInt64 in DynamoDB Local, where numbers have 38 digits
// and an unguarded ADD would store a balance no int64 can read back.
func TestCredit_that_would_overflow_the_balance_is_rejected_with_a_reason(t *testing.T) {
	const start = math.MaxInt64 - 5
	tests := []struct {
		name        string
		amount      int64
		wantOutcome idempotency.Outcome
		wantBalance int64
	}{
		{"a credit reaching MaxInt64 exactly is applied", 5, idempotency.Applied, math.MaxInt64},
		{"a credit one past MaxInt64 is rejected", 6, idempotency.Rejected, start},
		{"the largest credit is rejected", ledger.MaxAmount, idempotency.Rejected, start},
	}
	db := testkit.DynamoDB(t)
	app, _ := testkit.StreamTable(t, db, "app")
	c, err := idempotency.New(db, ledger.Handler(app), idempotency.Config{Name: "ledger", Table: testkit.IdempotencyTable(t, db)})
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			account := "acc-near-max-" + strconv.Itoa(i)
			_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(app), Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: ledger.PK(account)}, "sk": &types.AttributeValueMemberS{Value: "ACCOUNT"},
				"kind": &types.AttributeValueMemberS{Value: "account"}, "id": &types.AttributeValueMemberS{Value: account},
				"balance": &types.AttributeValueMemberN{Value: strconv.FormatInt(start, 10)}}})
			if err != nil {
				t.Fatal(err)
			}
			ev, err := ledger.NewEvent(ledger.Credited, account, "ref-1", tt.amount, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Apply(ctx, ev, port.Delivery{MessageID: "m-" + strconv.Itoa(i)})
			if err != nil || res.Outcome != tt.wantOutcome {
				t.Fatalf("Apply = %+v, %v; want %s", res, err, tt.wantOutcome)
			}
			if tt.wantOutcome == idempotency.Rejected && res.Reason != ledger.ReasonBalanceOverflow {
				t.Fatalf("reason = %q; want %q", res.Reason, ledger.ReasonBalanceOverflow)
			}
			if got := balance(t, db, app, account); got != strconv.FormatInt(tt.wantBalance, 10) {
				t.Fatalf("balance = %s; want %d", got, tt.wantBalance)
			}
		})
	}
}

func balance(t *testing.T, db *dynamodb.Client, table, account string) string {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: ledger.PK(account)},
			"sk": &types.AttributeValueMemberS{Value: "ACCOUNT"}}})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := out.Item["balance"].(*types.AttributeValueMemberN)
	if n == nil {
		t.Fatalf("account %s has no balance: %v", account, out.Item)
	}
	return n.Value
}
