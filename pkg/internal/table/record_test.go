package table_test

import (
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/operator"
)

// A stored record decides an event of a payload when it is live, not a lease in progress, and
// of that payload, or a discard whose payload the operator's tool could not read; a live record
// of another payload is a conflict, not a decision. The values it reads are the ones the
// consumer writes (operator.StatusInProgress, idempotency.Discarded).
func TestDecides_a_live_record_of_the_payload_or_a_discard_without_one(t *testing.T) {
	now := time.Now()
	live := now.Add(time.Hour).Unix()
	applied := table.Record{Key: "c#e", Outcome: string(idempotency.Applied), PayloadHash: "h1", ExpiresAt: live}
	for _, tc := range []struct {
		name string
		rec  func(r table.Record) table.Record
		hash string
		want bool
	}{
		{"applied, same payload", func(r table.Record) table.Record { return r }, "h1", true},
		{"applied, another payload (a conflict)", func(r table.Record) table.Record { return r }, "h2", false},
		{"expired", func(r table.Record) table.Record { r.ExpiresAt = now.Add(-time.Second).Unix(); return r }, "h1", false},
		{"a lease in progress", func(r table.Record) table.Record { r.Status = operator.StatusInProgress; return r }, "h1", false},
		{"a completed lease", func(r table.Record) table.Record { r.Status = operator.StatusCompleted; return r }, "h1", true},
		{"discarded, no payload hash", func(r table.Record) table.Record {
			r.Outcome, r.PayloadHash = string(idempotency.Discarded), ""
			return r
		}, "h2", true},
		{"discarded, another payload", func(r table.Record) table.Record { r.Outcome = string(idempotency.Discarded); return r }, "h2", false},
		{"none", func(table.Record) table.Record { return table.Record{} }, "h1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := table.Decides(tc.rec(applied), tc.hash, now); got != tc.want {
				t.Errorf("Decides = %v; want %v", got, tc.want)
			}
		})
	}
}
