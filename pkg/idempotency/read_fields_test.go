package idempotency_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
)

// Closing is what an item may carry besides its stock: whether it is closed to reservations.
type Closing struct {
	Closed bool `dynamodbav:"closed"`
}

// closableStock is a stock item read with what closes it, embedded by pointer: attributevalue
// decodes the embedded struct's fields as the item's own attributes.
type closableStock struct {
	stock
	*Closing
}

// An attribute that a struct embedded by pointer names, and that the item lacked, is
// conditioned on its absence as any other the struct names: a writer closing the item before
// the commit makes the event decided again, on the item closed.
func TestRead_an_attribute_of_a_struct_embedded_by_pointer_is_conditioned(t *testing.T) {
	f := newReadFixture(t, 1)
	f.putStock(t, "hinge", 10, 0) // not closed: no attribute
	f.raceWith = func(context.Context) error {
		k := stockKey("hinge")
		f.put(t, map[string]any{"pk": k["pk"], "sk": k["sk"], "stock": 10, "reserved": 0, "closed": true})
		return nil
	}
	r := idempotency.NewRouter()
	idempotency.RouteReading(r, "stock.reserve", func(ctx context.Context, ev cloudevent.Event, d reserve) (idempotency.Effect, error) {
		var s closableStock
		if _, err := idempotency.Read(ctx, f.App, stockKey(d.Item), &s); err != nil {
			return nil, err
		}
		status := "reserved"
		if s.Closing != nil && s.Closed {
			status = "closed"
		}
		effect := idempotency.Effect{idempotency.Put(f.App, map[string]any{"pk": "RESERVATION#" + ev.ID, "sk": "RESERVATION", "status": status})}
		if status == "reserved" {
			effect = append(effect, idempotency.Update(f.App, stockKey(d.Item),
				expression.Set(expression.Name("reserved"), expression.Value(s.Reserved+d.Quantity))))
		}
		return effect, nil
	})
	id := applytest.Unique(t)
	res, err := applytest.Process(context.Background(), f.consumerOf(t, r), applytest.Message(t, "m1", id, "stock.reserve", reserve{Item: "hinge", Quantity: 3}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
	}
	if got := f.status(t, id); got != "closed" {
		t.Errorf("reservation %q, want closed (the writer closed the item before the commit)", got)
	}
	if s, _ := f.stock(t, "hinge"); s.Reserved != 0 {
		t.Errorf("reserved %d of a closed item, want 0", s.Reserved)
	}
}

// Chain is a struct that embeds a pointer to its own type.
type Chain struct {
	*Chain
	Link string `dynamodbav:"link"`
}

// A struct that embeds itself by pointer is read as attributevalue decodes it: its own fields,
// once.
func TestRead_into_a_struct_embedding_itself_ends(t *testing.T) {
	if _, err := idempotency.Read(context.Background(), "app", stockKey("x"), &Chain{}); err == nil {
		t.Fatalf("Read outside a decision: no error")
	}
}

// options is an item read with many attributes it may lack.
type options struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Colour  string `dynamodbav:"colour"`
	Size    string `dynamodbav:"size"`
	Finish  string `dynamodbav:"finish"`
	Thread  string `dynamodbav:"thread"`
	Length  int    `dynamodbav:"length"`
	Width   int    `dynamodbav:"width"`
	Weight  int    `dynamodbav:"weight"`
	Batch   string `dynamodbav:"batch"`
	Origin  string `dynamodbav:"origin"`
	Comment string `dynamodbav:"comment"`
}

// A handler that reads one item many times (once per line of an order, say) into the same
// struct conditions the commit on each attribute once: its condition does not grow with the
// reads past what DynamoDB takes.
func TestRead_of_one_item_many_times_conditions_each_attribute_once(t *testing.T) {
	f := newReadFixture(t, 0)
	k := stockKey("washer")
	f.put(t, map[string]any{"pk": k["pk"], "sk": k["sk"]}) // none of the options
	r := idempotency.NewRouter()
	idempotency.RouteReading(r, "order.place", func(ctx context.Context, ev cloudevent.Event, d reserve) (idempotency.Effect, error) {
		for range d.Quantity { // a line per unit, each reading the item
			var o options
			if _, err := idempotency.Read(ctx, f.App, k, &o); err != nil {
				return nil, err
			}
		}
		return idempotency.Effect{idempotency.Put(f.App, map[string]any{"pk": "ORDER#" + ev.ID, "sk": "ORDER"})}, nil
	})
	res, err := applytest.Process(context.Background(), f.consumerOf(t, r), applytest.Message(t, "m1", applytest.Unique(t), "order.place", reserve{Item: "washer", Quantity: 20}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
	}
}
