package idempotency_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// Every key the engine writes for a consumer starts with one of its KeyPrefixes, and with
// none of another consumer's, even one whose name starts like it.
func TestKeyPrefixes_cover_every_item_of_a_consumer_and_no_other(t *testing.T) {
	keys := func(consumer string) []string {
		return []string{idempotency.Key(consumer, "ev-1"), table.AttemptsKey(consumer, "ev-1"), table.HoldKey(consumer, "group-1"),
			table.PageKey(consumer, "group-1", 1), table.MessageKey(consumer, "group-1", "m-1")}
	}
	covered := func(prefixes []string, key string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(key, p) })
	}
	for _, k := range keys("ledger") {
		if !covered(idempotency.KeyPrefixes("ledger"), k) {
			t.Errorf("key %q of ledger starts with none of %v", k, idempotency.KeyPrefixes("ledger"))
		}
	}
	for _, other := range []string{"ledger-2", "note-tagger", "led"} {
		for _, k := range keys(other) {
			if covered(idempotency.KeyPrefixes("ledger"), k) {
				t.Errorf("key %q of %s starts with one of ledger's %v", k, other, idempotency.KeyPrefixes("ledger"))
			}
		}
	}
}
