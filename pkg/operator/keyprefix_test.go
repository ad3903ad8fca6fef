package operator_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/operator"
)

// Every key an Admin reads or writes for a consumer (its records, attempt counts, holds and
// their pages, the discards of a message and the copies of a conflict's letter) starts with one
// of the consumer's KeyPrefixes, and none of another consumer's, even one whose name starts
// like it: an operator's policy names exactly these.
func TestKeyPrefixes_cover_every_item_an_Admin_touches_and_no_other_consumers(t *testing.T) {
	keys := func(consumer string) []string {
		return []string{table.Key(consumer, "ev-1"), table.AttemptsKey(consumer, "ev-1"), table.HoldKey(consumer, "group-1"),
			table.PageKey(consumer, "group-1", 2), table.MessageKey(consumer, "group-1", "m-1"), table.DiscardedKey(consumer, "ev-1")}
	}
	covered := func(prefixes []string, key string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(key, p) })
	}
	for _, k := range keys("ledger") {
		if !covered(operator.KeyPrefixes("ledger"), k) {
			t.Errorf("key %q of ledger starts with none of %v", k, operator.KeyPrefixes("ledger"))
		}
	}
	for _, other := range []string{"ledger-2", "note-tagger", "led"} {
		for _, k := range keys(other) {
			if covered(operator.KeyPrefixes("ledger"), k) {
				t.Errorf("key %q of %s starts with one of ledger's %v", k, other, operator.KeyPrefixes("ledger"))
			}
		}
	}
}
