package shop_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"example.com/shop"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The spend handler, tested as its team would with onceflow's test kit: every redelivery an
// order can have leaves the customer's spend counted once. The one after the record expired is
// stopped by the handler's own entry write (OrDuplicate), not by the engine's record.
func TestSpend_handler_counts_an_order_once_whatever_the_redelivery(t *testing.T) {
	db := testkit.DynamoDB(t)
	table := testkit.Table(t, db, "shop", "pk", "sk")
	clock := testkit.NewClock()
	c := testkit.NewConsumer(t, db, shop.Handler(table), idempotency.Config{Name: "spend", Now: clock.Now}, sqsbatch.Config{})
	orders := testkit.FIFO("orders")
	placed := orders.Message("c1", order(t, shop.OrderPlaced, shop.Order{OrderID: "o1", CustomerID: "c1", Total: 30}))
	second := orders.Message("c1", order(t, shop.OrderPlaced, shop.Order{OrderID: "o2", CustomerID: "c1", Total: 5}))

	for _, step := range []struct {
		name  string
		batch func() []string
	}{
		{"first delivery, with a second order of the group behind it", func() []string { return c.Receive(testkit.Batch(placed, second)) }},
		{"the same message again", func() []string { return c.Receive(testkit.Batch(testkit.Again(placed))) }},
		{"a new message id", func() []string { return c.Receive(testkit.Batch(orders.Resent(placed))) }},
		{"after the record expired", func() []string {
			clock.ExpireRecords(idempotency.DefaultRetention)
			return c.Receive(testkit.Batch(testkit.Again(placed)))
		}},
	} {
		if failed := step.batch(); len(failed) != 0 {
			t.Fatalf("%s: failed %v; want none", step.name, failed)
		}
		if got := spend(t, db, table, "c1"); got != 35 {
			t.Fatalf("%s: spend = %d; want 35, each order counted once", step.name, got)
		}
	}
	if got := c.Count(metrics.Duplicate); got != 3 {
		t.Errorf("%v duplicates; want 3", got)
	}
}

func order(t *testing.T, typ string, o shop.Order) string {
	t.Helper()
	ev, err := cloudevent.New(typ+"-"+o.OrderID, "shop/api", typ, o.CustomerID, time.Now(), o)
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func spend(t *testing.T, db *dynamodb.Client, table, customer string) int64 {
	t.Helper()
	key, _ := attributevalue.MarshalMap(shop.Spend(customer))
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Total int64 }
	if err := attributevalue.UnmarshalMap(out.Item, &v); err != nil {
		t.Fatal(err)
	}
	return v.Total
}
