package model_test

import "testing"

// pan writes a count of a hundred million states or more in e-notation, six digits kept.
func TestModel_states_read_as_pan_writes_them(t *testing.T) {
	for out, want := range map[string]int{
		" 65079192 states, stored (1.30158e+08 visited)": 65079192,
		"1.30158e+08 states, stored":                     130158000,
		"no count":                                       0,
	} {
		if got := panStates(out); got != want {
			t.Errorf("panStates(%q) = %d; want %d", out, got, want)
		}
	}
}
