package idempotency_test

import (
	"context"
	"fmt"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// orderPlacedV1 is order.placed as its consumer was written: version 1 of the event.
type orderPlacedV1 struct {
	OrderID string `json:"orderId"`
	Total   int    `json:"total"`
}

// A consumer written for version 1 of order.placed reads version 2, which added a field to
// the data and an extension attribute to the envelope: it is a tolerant reader. Strict decoding
// is one option away: the added field is then malformed (dead-lettered). A type the router
// routes nowhere is ignored by the consumer (Ignored: acknowledged, nothing written), or
// malformed under a strict router.
func ExampleStrict() {
	decide := func(_ cloudevent.Event, o orderPlacedV1) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Put("orders", map[string]any{"pk": o.OrderID, "total": o.Total})}, nil
	}
	tolerant, strict := idempotency.NewRouter(), idempotency.NewRouter()
	idempotency.Route(tolerant, "order.placed", decide)
	idempotency.Route(strict, "order.placed", decide, idempotency.Strict())

	v2, _ := cloudevent.Decode([]byte(`{"specversion":"1.0","id":"o1-placed","source":"shop","type":"order.placed",
		"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"datacontenttype":"application/json; charset=utf-8","data":{"orderId":"o1","total":42,"coupon":"WELCOME"}}`))
	effect, err := tolerant.Decide(context.Background(), v2)
	fmt.Println(len(effect), err)
	_, err = strict.Decide(context.Background(), v2)
	fmt.Println(err)

	shipped := v2
	shipped.Type = "order.shipped"
	_, err = tolerant.Decide(context.Background(), shipped)
	fmt.Println(err)
	_, err = idempotency.NewRouter(idempotency.Strict()).Decide(context.Background(), shipped)
	fmt.Println(err)
	// Output:
	// 1 <nil>
	// malformed message: data: invalid for order.placed (its route decodes strictly): json: unknown field "coupon"
	// event type "order.shipped" is routed nowhere (this consumer routes [order.placed]): ignored
	// malformed message: type: "order.shipped" is not handled by this consumer; it handles []
}
