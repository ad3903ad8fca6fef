package workload

import (
	"strings"
	"testing"
	"time"
)

// A progress line fits a 120-column terminal, even with every figure at its widest.
func TestProgressLine_fits_120_columns(t *testing.T) {
	cases := map[string]progress{
		"a default run": {elapsed: 6 * time.Second, phase: "requests", done: 276, total: 1200, http: 341, relay: 277,
			consumers: []consumerProgress{{"ledger", 5, 8, 211}, {"note-notifier", 0, 2, 52}, {"note-tagger", 0, 0, 54}}},
		"every figure wide": {elapsed: 9999 * time.Second, phase: "draining re-sends", done: 99999, total: 99999, http: 999999, relay: 999999,
			consumers: []consumerProgress{{"ledger", 99999, 9999, 999999}, {"note-notifier", 99999, 9999, 999999}, {"note-tagger", 99999, 9999, 999999}}},
		"a chaos run with calls denied, every figure wide": {elapsed: 9999 * time.Second, phase: "draining re-sends", done: 99999, total: 99999, http: 999999,
			relay: 999999, chaos: true, faults: 9999999, denied: 999999,
			consumers: []consumerProgress{{"ledger", 99999, 9999, 999999}, {"note-notifier", 99999, 9999, 999999}, {"note-tagger", 99999, 9999, 999999}}},
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			line := p.line()
			for _, l := range strings.Split(line, "\n") {
				if n := len([]rune(l)); n > 120 {
					t.Errorf("%d columns: %q", n, l)
				}
			}
			want := []string{p.phase, "ledger", "note-notifier", "note-tagger", "relay"}
			if p.denied > 0 {
				want = append(want, "DENIED 999999")
			}
			for _, want := range want {
				if !strings.Contains(line, want) {
					t.Errorf("line %q does not show %q", line, want)
				}
			}
		})
	}
}
