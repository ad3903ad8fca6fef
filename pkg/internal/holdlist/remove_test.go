package holdlist_test

import (
	"slices"
	"testing"

	"github.com/onceflow/onceflow/pkg/internal/holdlist"
)

// Taking a message off a held list takes every entry that surely is it (its first message id,
// or its event id with the same payload hash), and, of the entries written before entries
// carried a hash (known by event id alone, so perhaps another payload's, a conflict), only the
// first, as before: a commit never takes a conflict's entry with it.
func TestHold_remove_takes_every_entry_of_the_message_and_one_without_a_hash(t *testing.T) {
	messages := func(h holdlist.Hold) []string {
		var ids []string
		for _, e := range h.Held {
			ids = append(ids, e.MessageID)
		}
		return ids
	}
	e := holdlist.Held{EventID: "e", MessageID: "m-r", PayloadHash: "h1"}
	for _, tc := range []struct {
		name       string
		held, want []string
		remove     func(*holdlist.Hold, holdlist.Held) bool
	}{
		{"Remove", []string{"m-1", "m-r", "m-old", "m-conflict", "m-old2"}, []string{"m-old", "m-conflict", "m-old2"}, holdlist.Remove},
		{"Remove, no entry of a hash", []string{"m-old", "m-x", "m-old2"}, []string{"m-x", "m-old2"}, holdlist.Remove},
		{"RemoveSure", []string{"m-1", "m-r", "m-old", "m-conflict"}, []string{"m-old", "m-conflict"}, holdlist.RemoveSure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries := map[string]holdlist.Held{
				"m-1":        {EventID: "e", MessageID: "m-1", PayloadHash: "h1"}, // its event's first message
				"m-r":        {MessageID: "m-r"},                                  // the backstop's, not decoded
				"m-old":      {EventID: "e", MessageID: "m-old"},                  // written before hashes
				"m-old2":     {EventID: "e", MessageID: "m-old2"},
				"m-conflict": {EventID: "e", MessageID: "m-conflict", PayloadHash: "h2"},
				"m-x":        {EventID: "x", MessageID: "m-x", PayloadHash: "hx"},
			}
			var h holdlist.Hold
			for _, id := range tc.held {
				h.Held = append(h.Held, entries[id])
			}
			if !tc.remove(&h, e) {
				t.Fatalf("%s reported nothing taken off %v", tc.name, tc.held)
			}
			if got := messages(h); !slices.Equal(got, tc.want) {
				t.Errorf("%s of %v left %v; want %v", tc.name, tc.held, got, tc.want)
			}
		})
	}
}
