package localcloud

import (
	"io/fs"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"
)

// countingFS counts the files opened through it.
type countingFS struct {
	fs.FS
	opens atomic.Int64
}

func (c *countingFS) Open(name string) (fs.File, error) {
	c.opens.Add(1)
	return c.FS.Open(name)
}

// The peak resident set of an environment's function is read after every invocation: the
// invocation's hot path. A chaos run spent most of the local cloud's CPU reading every
// process's /proc entry to find the environment's children on each one. The children are
// found once, then only their own entries are read, until they change.
func TestPeakRSS_reads_only_the_environments_children_once_it_knows_them(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc here: the peak is 0 where /proc cannot tell")
	}
	parent := exec.Command("sh", "-c", "sleep 60 & wait")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })

	proc := &countingFS{FS: os.DirFS("/proc")}
	var r peakRSS
	r.proc = proc
	var first int
	for deadline := time.Now().Add(10 * time.Second); first == 0; time.Sleep(20 * time.Millisecond) { // sleep started
		if first = r.read(parent.Process.Pid); first == 0 && time.Now().After(deadline) {
			t.Fatal("no peak resident set read for the shell's child")
		}
	}
	before := proc.opens.Load()
	if again := r.read(parent.Process.Pid); again < first {
		t.Errorf("peak %d KiB, then %d: a peak never goes down", first, again)
	}
	if n := proc.opens.Load() - before; n > 2 {
		t.Errorf("a second read of the same environment opened %d files of /proc; want its one child's stat and status", n)
	}
}

// A restarted environment (another process) or a child that exited is found again.
func TestPeakRSS_finds_the_children_of_a_new_process_again(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc here")
	}
	var r peakRSS
	for range 2 {
		parent := exec.Command("sh", "-c", "sleep 60 & wait")
		if err := parent.Start(); err != nil {
			t.Fatal(err)
		}
		got := 0
		for deadline := time.Now().Add(10 * time.Second); got == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			got = r.read(parent.Process.Pid)
		}
		_ = parent.Process.Kill()
		_ = parent.Wait()
		if got == 0 {
			t.Fatalf("no peak read for process %d's child", parent.Process.Pid)
		}
	}
	if r.read(1<<22+12345) != 0 {
		t.Error("a process that does not exist has a peak; want 0")
	}
}
