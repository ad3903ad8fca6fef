package idempotency_test

import (
	"testing"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// The retention the consumer documents is the one the table's layout keeps an operator's skip
// for, on a hold.
func TestDefaultRetention_is_the_retention_of_the_tables_items(t *testing.T) {
	if idempotency.DefaultRetention != table.Retention {
		t.Errorf("DefaultRetention is %v; the table's layout keeps items %v", idempotency.DefaultRetention, table.Retention)
	}
}
