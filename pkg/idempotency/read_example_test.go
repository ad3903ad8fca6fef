package idempotency_test

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

type item struct {
	SKU      string `dynamodbav:"pk"`
	Stock    int    `dynamodbav:"stock"`
	Reserved int    `dynamodbav:"reserved"`
}

type reservation struct {
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

// A handler that decides from what it reads: a reservation fits when reserved + quantity does
// not exceed the stock. The engine reads the item consistently and commits the effect only if
// the item is still as read; when a concurrent writer changed it, the event is decided again on
// what is there now. It needs DynamoDB (a Consumer's Apply, or sqsbatch.NewConsumer), so this
// example is compiled, not run; pkg/testkit's read_test.go runs this handler against DynamoDB
// Local with a writer racing it.
func ExampleRead() {
	r := idempotency.NewRouter()
	idempotency.RouteReading(r, "stock.reserve", func(ctx context.Context, ev cloudevent.Event, d reservation) (idempotency.Effect, error) {
		var it item
		found, err := idempotency.Read(ctx, "inventory", map[string]string{"pk": d.SKU}, &it)
		if err != nil {
			return nil, err
		}
		if !found || it.Reserved+d.Quantity > it.Stock {
			return idempotency.Effect{idempotency.Put("inventory", map[string]any{"pk": "RESERVATION#" + ev.ID, "status": "out of stock"})}, nil
		}
		return idempotency.Effect{
			idempotency.Put("inventory", map[string]any{"pk": "RESERVATION#" + ev.ID, "status": "reserved"}),
			idempotency.Update("inventory", map[string]string{"pk": d.SKU},
				expression.Set(expression.Name("reserved"), expression.Value(it.Reserved+d.Quantity))),
		}, nil
	})
	_ = r // idempotency.New(db, r, cfg), or sqsbatch.NewConsumer(db, r, cfg, sqsbatch.Config{})
}
