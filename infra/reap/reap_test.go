package reap_test

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/reap"
)

func TestMark_adds_a_run_once_and_keeps_the_runs_before_it(t *testing.T) {
	env := reap.Mark([]string{"A=1", reap.Variable + "=outer"}, "inner")
	env = reap.Mark(env, "inner")
	if !slices.Contains(env, reap.Variable+"=outer inner") || !slices.Contains(env, "A=1") || len(env) != 2 {
		t.Errorf("Mark = %q; want A=1 and %s=outer inner", env, reap.Variable)
	}
}

// Sweep finds the run's processes by their environment, whoever their parent, and ends them:
// SIGTERM, then SIGKILL for one that ignores it. A process of another run is left alone.
func TestSweep_ends_every_process_of_the_run_and_no_other(t *testing.T) {
	t.Parallel()
	run, other := reap.NewRun(), reap.NewRun()
	polite := start(t, run, "sleep 600")
	stubborn := start(t, run, `trap "" TERM; sleep 600 & wait`) // its sleep ignores SIGTERM too
	start(t, other, "sleep 600")                                // a bystander
	// The polite sleep (its shell may exec it), the stubborn shell and its sleep, once started.
	for deadline := time.Now().Add(10 * time.Second); len(reap.Find(run)) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Find(run) = %v; want the run's shells and sleeps", reap.Find(run))
		}
	}
	found, left := reap.Sweep(run, time.Second)
	if len(left) != 0 || len(reap.Find(run)) != 0 {
		t.Fatalf("after Sweep, %v still run", reap.Find(run))
	}
	for _, c := range []*exec.Cmd{polite, stubborn} {
		if !slices.Contains(pids(found), c.Process.Pid) {
			t.Errorf("Sweep found %v; want %d among them", found, c.Process.Pid)
		}
	}
	if len(reap.Find(other)) == 0 {
		t.Errorf("Sweep of one run ended another's process")
	}
}

func start(t *testing.T, run, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = reap.Mark(os.Environ(), run)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() { reap.Sweep(run, 0) })
	return cmd
}

func pids(ps []reap.Process) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.PID
	}
	return out
}
