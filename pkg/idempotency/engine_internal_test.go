package idempotency

import (
	"testing"

	"github.com/onceflow/onceflow/pkg/internal/engine"
)

// What this package names, the engine does: its defaults, limits, policies and outcomes are
// the engine's, value for value, so that a conversion at the boundary never changes one.
func TestNames_are_the_engines_values(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, its any
	}{
		{"DefaultRetention", DefaultRetention, engine.DefaultRetention},
		{"MaxEffectWrites", MaxEffectWrites, engine.MaxEffectWrites},
		{"MaxTransactionSize", MaxTransactionSize, engine.MaxTransactionSize},
		{"GoOn", uint8(GoOn), uint8(engine.GoOn)},
		{"HoldGroup", uint8(HoldGroup), uint8(engine.HoldGroup)},
		{"Applied", string(Applied), string(engine.Applied)},
		{"Rejected", string(Rejected), string(engine.Rejected)},
		{"Duplicate", string(Duplicate), string(engine.Duplicate)},
		{"Conflict", string(Conflict), string(engine.Conflict)},
		{"Malformed", string(Malformed), string(engine.Malformed)},
		{"Failed", string(Failed), string(engine.Failed)},
		{"Discarded", string(Discarded), string(engine.Discarded)},
		{"Ignored", string(Ignored), string(engine.Ignored)},
	} {
		if c.ours != c.its {
			t.Errorf("%s is %v here, %v in the engine", c.name, c.ours, c.its)
		}
	}
}
