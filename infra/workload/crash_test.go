package workload_test

import (
	"testing"

	"github.com/onceflow/onceflow/infra/workload"
)

func TestCrash_fires_once_on_the_chosen_invocation_of_its_function(t *testing.T) {
	c := &workload.Crash{Function: "Ledger", After: 3}
	var got []bool
	for _, fn := range []string{"Ledger", "Other", "Ledger", "Ledger", "Ledger", "Other"} {
		got = append(got, c.Hook(fn))
	}
	want := []bool{false, false, false, true, false, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("hooks = %v, want %v", got, want)
		}
	}
	if !c.Fired() {
		t.Error("Fired() = false after the crash")
	}
	var none *workload.Crash
	if none.Hook("Ledger") || none.Fired() {
		t.Error("a nil Crash crashed")
	}
}
