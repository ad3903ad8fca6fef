package api_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceflow/onceflow/internal/api"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// countedHolds counts the hold reads of a real Admin of the idempotency table.
type countedHolds struct {
	*operator.Admin
	reads atomic.Int32
}

func (c *countedHolds) Hold(ctx context.Context, consumer, group string) (operator.Hold, bool, error) {
	c.reads.Add(1)
	return c.Admin.Hold(ctx, consumer, group)
}

// The hold is one extra GetItem, made only for a pending movement: a decided movement's status
// and an unknown one's are answered without it.
func TestAPI_movement_status_reads_the_hold_only_while_pending(t *testing.T) {
	f := newFixture(t)
	holds := &countedHolds{Admin: operator.New(f.db, testkit.IdempotencyTable(t, f.db))}
	h, err := api.New(api.Config{DB: f.db, Table: f.table, Now: func() time.Time { return now }, Holds: holds, LedgerConsumer: "ledger"})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	f.do(t, sample(t, "api-credit.json"))
	path := statusPath("acc-1001", "invoice-2026-0042")
	if status, body := f.getPath(t, path); status != http.StatusOK || body["status"] != "pending" || body["heldBehind"] != nil || holds.reads.Load() != 1 {
		t.Fatalf("pending, not held: %d %v after %d hold reads; want pending, no heldBehind, one read", status, body, holds.reads.Load())
	}
	ev, err := ledger.NewEvent(ledger.Credited, "acc-1001", "invoice-2026-0042", 5000, now)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, f, ev)
	f.getPath(t, path)
	f.getPath(t, statusPath("acc-1001", "invoice-unknown"))
	if n := holds.reads.Load(); n != 1 {
		t.Fatalf("%d hold reads after an applied and an unknown movement's status; want still 1", n)
	}
}

func TestAPI_config_holds_and_ledger_consumer_go_together(t *testing.T) {
	f := newFixture(t)
	if _, err := api.New(api.Config{DB: f.db, Table: f.table, LedgerConsumer: "ledger"}); err == nil {
		t.Error("a ledger consumer without holds was accepted")
	}
}
