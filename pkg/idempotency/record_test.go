package idempotency_test

import (
	"testing"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// The values the consumer documents are the ones the table's layout writes and reads (the
// operator's API reads them there too): a record's retention, a lease in progress, a discard.
func TestRecord_documented_values_are_the_tables_layout(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"DefaultRetention", idempotency.DefaultRetention, table.Retention},
		{"StatusInProgress", idempotency.StatusInProgress, table.StatusInProgress},
		{"Discarded", string(idempotency.Discarded), table.Discarded},
	} {
		if c.got != c.want {
			t.Errorf("%s is %v; the table's layout says %v", c.name, c.got, c.want)
		}
	}
}
