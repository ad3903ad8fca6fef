package operator_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/operator"
)

// Every key the engine writes for a consumer (its records, attempt counts, holds and their
// pages, the discards of a message, the notes of a letter sent) starts with one of its KeyPrefixes, and every key an Admin
// reads or writes (those, and the copies of a conflict's letter) with one of its
// AdminKeyPrefixes; no key of another consumer does, even one whose name starts like it: a
// consumer's policy and an operator's name exactly these.
func TestKeyPrefixes_cover_every_item_of_a_consumer_and_no_other(t *testing.T) {
	engine := func(consumer string) []string {
		return []string{operator.Key(consumer, "ev-1"), table.AttemptsKey(consumer, "ev-1"), table.HoldKey(consumer, "group-1"),
			table.PageKey(consumer, "group-1", 2), table.MessageKey(consumer, "group-1", "m-1"), table.LetterKey(consumer, "group-1", "m-2"),
			table.LetterKey(consumer, "", "m-3")}
	}
	admin := func(consumer string) []string { return append(engine(consumer), table.DiscardedKey(consumer, "ev-1")) }
	covered := func(prefixes []string, key string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(key, p) })
	}
	for _, tc := range []struct {
		name     string
		prefixes func(string) []string
		keys     func(string) []string
	}{{"KeyPrefixes", operator.KeyPrefixes, engine}, {"AdminKeyPrefixes", operator.AdminKeyPrefixes, admin}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range tc.keys("ledger") {
				if !covered(tc.prefixes("ledger"), k) {
					t.Errorf("key %q of ledger starts with none of %v", k, tc.prefixes("ledger"))
				}
			}
			for _, other := range []string{"ledger-2", "note-tagger", "led"} {
				for _, k := range tc.keys(other) {
					if covered(tc.prefixes("ledger"), k) {
						t.Errorf("key %q of %s starts with one of ledger's %v", k, other, tc.prefixes("ledger"))
					}
				}
			}
		})
	}
}
