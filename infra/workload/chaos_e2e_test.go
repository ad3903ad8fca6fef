package workload_test

import (
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/workload"
	"github.com/onceflow/onceflow/infra/workload/workloadtest"
	"github.com/onceflow/onceflow/internal/testenv"
)

// The CI-sized chaos run (`make chaos` at a small size, higher fault rates): every fault kind
// is injected between the functions and the emulators, environments are killed during and
// after invocations, two accounts are poisoned mid-run with a producer's bad message and
// recovered with the operator's CLI by the runbook while the traffic goes on (the drill), the
// dead-letter queues are redriven, and every invariant of make run still holds.
func TestChaos_small_run_with_every_fault_kind_keeps_every_invariant(t *testing.T) {
	// Each e2e test runs its own cloud under its own names: they share the machine, not state.
	t.Parallel()
	// Bounded by the run's -timeout only: under load the run takes many times its quiet 79 s
	// (16.5 min at a load of 21 on 2 cores, where 8 minutes once ran out at 15).
	ctx := testenv.BeforeTimeout(t)
	cloud := workloadtest.Start(ctx, t, template, "chaos", func(cfg *localcloud.Config) {
		cfg.Chaos = localcloud.Chaos{Throttle: 0.03, ServerError: 0.03, Conflict: 0.05, ResetBefore: 0.03, ResetAfter: 0.03,
			Latency: 0.03, MaxLatency: 100 * time.Millisecond, KillDuring: 0.05, KillAfter: 0.03}
	})

	rep, err := workload.Run(ctx, cloud.Cloud, workload.Config{Notes: 60, Movements: 240, Accounts: 12,
		Receiver: cloud.Receiver, Redrive: true, DrainTimeout: 3 * time.Minute, Poison: 2, CLI: workloadtest.CLI(t)})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log(out.String())
	if !rep.OK() {
		t.Error("an invariant failed under chaos (see the summary above)")
	}
	if d := rep.Drill; len(d.Poisoned) != 2 || d.Discarded != 2 || d.Skipped != 1 || d.Requeued != 1 || d.Returned != 1 || d.Redriven == 0 {
		t.Errorf("drill = %+v; want 2 accounts poisoned (a malformed message skipped first, redriven after its tail, back unheld, discarded and sent again; a conflict), 2 letters discarded, 1 skipped, 1 back, 1 sent again, some redriven", d)
	}
	// The stream consumer (the statement) was drilled too, and its statements checked.
	for _, want := range []string{"the stream recovery drill", "every account's statement"} {
		found := false
		for _, inv := range rep.Invariants {
			found = found || strings.HasPrefix(inv.Name, want) && inv.OK
		}
		if !found {
			t.Errorf("no passing invariant %q: the stream consumer was not drilled or not checked", want)
		}
	}
	if below := rep.FaultsBelow(5); len(below) > 0 {
		t.Errorf("fault kinds injected fewer than 5 times: %v", below)
	}
}
