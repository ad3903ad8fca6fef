package shop_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"example.com/shop"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// delivery is one record of this service's own transport (an in-house queue): its id, its
// ordered group and its event.
type delivery struct {
	id    string
	group string
	ev    cloudevent.Event
}

// orderPort is a port written outside the onceflow module, on port.Engine alone: each
// group's deliveries in order, groups concurrently. The rest is the engine's: their commits
// packed, a delivery's failures counted and permanent at the rules' MaxAttempts, a permanent
// failure's group held; the port sets aside what the engine says is permanent.
type orderPort struct {
	e     port.Engine
	rules port.Rules
}

// handle returns the ids of the deliveries to deliver again and of those set aside.
func (p orderPort) handle(ctx context.Context, batch []delivery) (again, aside []string) {
	groups := map[string][]delivery{}
	var order []string
	for _, d := range batch {
		if groups[d.group] == nil {
			order = append(order, d.group)
		}
		groups[d.group] = append(groups[d.group], d)
	}
	b := p.e.Begin(len(order), p.rules)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, g := range order {
		wg.Go(func() {
			defer b.Leave(ctx)
			for i, d := range groups[g] {
				err := b.Apply(ctx, d.ev, port.Delivery{MessageID: d.id, Group: d.group})
				if err == nil {
					continue
				}
				mu.Lock()
				if idempotency.IsPermanent(err) {
					aside = append(aside, d.id)
					mu.Unlock()
					continue // set aside, held: the group's later deliveries are refused as held
				}
				for _, rest := range groups[g][i:] {
					again = append(again, rest.id)
				}
				mu.Unlock()
				return
			}
		})
	}
	wg.Wait()
	return again, aside
}

// A port outside the engine's module gets packing, attempt counting and holding through the
// exported contract (port.Engine and the Batch it begins) alone.
func TestPort_outside_the_engine_counts_holds_and_packs_through_the_contract(t *testing.T) {
	var commits atomic.Int64
	count := func(stack *middleware.Stack) error {
		return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("CountCommits",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if middleware.GetOperationName(ctx) == "TransactWriteItems" {
					commits.Add(1)
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	}
	l := newLocal(t)
	db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(count))
	pricing := idempotency.HandlerFunc(func(ctx context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		if ev.ID == "order.placed-o-bad" {
			return nil, errors.New("pricing service unavailable")
		}
		return shop.Handler(l.table).Decide(ctx, ev)
	})
	c, err := idempotency.New(db, pricing, idempotency.Config{Name: "spend", Table: l.idem, CacheSize: -1,
		AfterDeadLetter: idempotency.HoldGroup, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	p := orderPort{e: c.Engine(), rules: port.Rules{MaxAttempts: 2}}
	order := func(id, customer string, total int64) delivery {
		ev, err := cloudevent.New(shop.OrderPlaced+"-"+id, "shop/api", shop.OrderPlaced, customer, time.Now(),
			shop.Order{OrderID: id, CustomerID: customer, Total: total})
		if err != nil {
			t.Fatal(err)
		}
		return delivery{id: "d-" + id, group: "c-" + customer, ev: ev}
	}
	ctx := context.Background()

	// packing: the next orders of three customers commit in one transaction
	again, aside := p.handle(ctx, []delivery{order("o1", "ann"+l.suffix, 10), order("o2", "bob"+l.suffix, 20), order("o3", "cy"+l.suffix, 30)})
	if len(again)+len(aside) > 0 || commits.Load() != 1 {
		t.Fatalf("again %v, aside %v, %d TransactWriteItems; want all applied in 1", again, aside, commits.Load())
	}

	// counting and holding: o-bad fails twice, is set aside holding bob's group; o5 after it is held
	batch := []delivery{order("o-bad", "bob"+l.suffix, 5), order("o5", "bob"+l.suffix, 7), order("o6", "ann"+l.suffix, 1)}
	if again, aside := p.handle(ctx, batch); len(again) != 2 || len(aside) != 0 {
		t.Fatalf("first failure: again %v, aside %v; want o-bad and o5 again", again, aside)
	}
	again, aside = p.handle(ctx, batch[:2])
	if len(again) != 0 || len(aside) != 2 {
		t.Fatalf("second failure: again %v, aside %v; want o-bad set aside (failed 2 times) and o5 held behind it", again, aside)
	}
	a := operator.New(l.db, l.idem)
	at, ok, err := a.Attempts(ctx, "spend", "order.placed-o-bad")
	if err != nil || !ok || at.Attempts != 2 {
		t.Errorf("attempts of o-bad = %+v, %v, %v; want 2 counted", at, ok, err)
	}
	h, ok, err := a.Hold(ctx, "spend", "c-bob"+l.suffix)
	if err != nil || !ok || h.BlockerEventID != "order.placed-o-bad" || len(h.Held) != 2 {
		t.Errorf("hold of bob = %+v, %v, %v; want held behind o-bad, o5 in its list", h, ok, err)
	}
	if got := l.spend(t, "ann"+l.suffix); got != 11 {
		t.Errorf("ann's spend %d; want 11: her group is not held", got)
	}
	if got := l.spend(t, "bob"+l.suffix); got != 20 {
		t.Errorf("bob's spend %d; want 20: o-bad and o5 not applied", got)
	}
}
