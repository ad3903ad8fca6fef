package shop

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// Event types the spend consumer handles.
const (
	OrderPlaced   = "order.placed"
	OrderRefunded = "order.refunded"
)

// Order is the data of both event types.
type Order struct {
	OrderID    string `json:"orderId"`
	CustomerID string `json:"customerId"`
	Total      int64  `json:"total"`
}

// Validate refuses an order without its ids or with a non-positive total.
func (o Order) Validate() error {
	switch {
	case o.OrderID == "" || o.CustomerID == "":
		return cloudevent.Malformed("data", "orderId and customerId are required")
	case o.Total <= 0:
		return cloudevent.Malformed("data.total", "is %d; want a positive amount", o.Total)
	}
	return nil
}

// Key is the key of the table's items.
type Key struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
}

// Spend is a customer's spend item.
func Spend(customerID string) Key { return Key{PK: "CUSTOMER#" + customerID, SK: "SPEND"} }

// Entry is the item that records an order's placement or refund: written only if new, it is
// the effect's second line of defence behind the idempotency record (when the record has
// expired and the event comes again, the entry is still there).
type Entry struct {
	PK    string `dynamodbav:"pk"`
	SK    string `dynamodbav:"sk"`
	Total int64  `dynamodbav:"total"`
}

// entry is the write of an order's entry of kind, a duplicate if it exists.
func entry(table, kind string, o Order) idempotency.Write {
	return idempotency.Put(table, Entry{PK: "ORDER#" + o.OrderID, SK: kind, Total: o.Total}).
		If(expression.AttributeNotExists(expression.Name("pk"))).OrDuplicate()
}

// ReasonNothingToRefund is the rejection of a refund larger than the spend.
const ReasonNothingToRefund = "refund exceeds the customer's spend"

// Handler decides the effects on table: a placed order adds its total to the customer's spend,
// a refund takes it back if the spend covers it; each writes the order's entry if it is new.
func Handler(table string) *idempotency.Router {
	r := idempotency.NewRouter()
	idempotency.Route(r, OrderPlaced, func(_ cloudevent.Event, o Order) (idempotency.Effect, error) {
		return idempotency.Effect{entry(table, "PLACED", o), idempotency.Update(table, Spend(o.CustomerID),
			expression.Add(expression.Name("total"), expression.Value(o.Total)))}, nil
	})
	idempotency.Route(r, OrderRefunded, func(_ cloudevent.Event, o Order) (idempotency.Effect, error) {
		return idempotency.Effect{entry(table, "REFUNDED", o), idempotency.Update(table, Spend(o.CustomerID),
			expression.Add(expression.Name("total"), expression.Value(-o.Total))).
			If(expression.Name("total").GreaterThanEqual(expression.Value(o.Total))).
			OrReject(ReasonNothingToRefund)}, nil
	})
	return r
}
