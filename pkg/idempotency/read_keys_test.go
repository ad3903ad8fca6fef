package idempotency_test

import (
	"context"
	"testing"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
)

// Two items whose key values, written one after the other, read the same ("a,sk=S:b" and "c",
// "a" and "b,sk=S:c") are two items: a handler reading both gets each its own, and the commit
// checks each.
func TestRead_of_two_items_whose_keys_run_together_reads_each(t *testing.T) {
	f := newReadFixture(t, 0)
	f.put(t, map[string]any{"pk": "a,sk=S:b", "sk": "c", "n": 1})
	f.put(t, map[string]any{"pk": "a", "sk": "b,sk=S:c", "n": 2})
	type counted struct {
		N int `dynamodbav:"n"`
	}
	var got [2]counted
	r := idempotency.NewRouter()
	idempotency.RouteReading(r, "pair.read", func(ctx context.Context, ev cloudevent.Event, _ struct{}) (idempotency.Effect, error) {
		for i, k := range []map[string]string{{"pk": "a,sk=S:b", "sk": "c"}, {"pk": "a", "sk": "b,sk=S:c"}} {
			if _, err := idempotency.Read(ctx, f.App, k, &got[i]); err != nil {
				return nil, err
			}
		}
		return idempotency.Effect{}, nil
	})
	res, err := applytest.Process(context.Background(), f.consumerOf(t, r), applytest.Message(t, "m1", applytest.Unique(t), "pair.read", struct{}{}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
	}
	if got[0].N != 1 || got[1].N != 2 {
		t.Errorf("read %d and %d; want 1 and 2, each item its own", got[0].N, got[1].N)
	}
	if n := len(f.commits[0].TransactItems); n != 3 {
		t.Errorf("%d items committed; want 3: a check of each item read, the record", n)
	}
}
