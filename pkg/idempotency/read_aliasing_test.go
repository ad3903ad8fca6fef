package idempotency_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
)

// A handler that reads an item as attribute values and changes them in place to write the
// item back changes its own copy, not what the engine conditions the commit on: the item is
// unchanged since the read, and the effect commits at once.
func TestRead_what_the_handler_changes_in_place_is_not_the_condition(t *testing.T) {
	f := newReadFixture(t, 0)
	k := stockKey("spring")
	f.put(t, map[string]any{"pk": k["pk"], "sk": k["sk"], "stock": 10, "counts": map[string]any{"reserved": 0}})
	decisions := 0
	r := idempotency.NewRouter()
	idempotency.RouteReading(r, "stock.reserve", func(ctx context.Context, ev cloudevent.Event, d reserve) (idempotency.Effect, error) {
		decisions++
		var item map[string]types.AttributeValue
		if _, err := idempotency.Read(ctx, f.App, k, &item); err != nil {
			return nil, err
		}
		counts := item["counts"].(*types.AttributeValueMemberM)
		counts.Value["reserved"] = &types.AttributeValueMemberN{Value: "4"}
		return idempotency.Effect{idempotency.Put(f.App, item)}, nil
	})
	res, err := applytest.Process(context.Background(), f.consumerOf(t, r), applytest.Message(t, "m1", applytest.Unique(t), "stock.reserve", reserve{Item: "spring", Quantity: 4}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
	}
	if decisions != 1 {
		t.Errorf("decided %d times, want once: nothing changed the item", decisions)
	}
}
