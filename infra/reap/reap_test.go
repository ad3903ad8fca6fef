package reap_test

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
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

// A child started with Start dies with the process that started it, even one killed with
// SIGKILL: the test starts itself as that process (TestHelperStarts), which starts a sleep.
func TestStart_a_child_dies_with_its_parent_killed_with_SIGKILL(t *testing.T) {
	t.Parallel()
	parent := exec.Command(os.Args[0], "-test.run=^TestHelperStarts$")
	parent.Env = append(os.Environ(), "REAP_HELPER=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	child, _ := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || child == 0 {
		t.Fatalf("the helper said %q: %v", line, err)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); alive(child); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("child %d still runs a minute after its parent was killed", child)
		}
	}
}

// TestHelperStarts is the parent of TestStart_a_child_dies_with_its_parent_killed_with_SIGKILL:
// it starts a sleep with Start from a goroutine that then ends, prints its pid and waits to be
// killed. Without REAP_HELPER it does nothing.
func TestHelperStarts(t *testing.T) {
	if os.Getenv("REAP_HELPER") == "" {
		return
	}
	started := make(chan int)
	go func() { // a goroutine of its own, ended before the parent is killed: only the process matters
		cmd := exec.Command("sleep", "600")
		if err := reap.Start(cmd, syscall.SIGKILL); err != nil {
			panic(err)
		}
		started <- cmd.Process.Pid
	}()
	os.Stdout.WriteString(strconv.Itoa(<-started) + "\n")
	time.Sleep(10 * time.Minute)
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

// alive reports whether pid runs: not gone and not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && !strings.HasPrefix(strings.TrimSpace(string(b[i+1:])), "Z")
}
