package child_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/testkit/child"
)

// A child started with Start dies with the process that started it, even one killed with
// SIGKILL: the test starts itself as that process (TestHelperStarts), which starts a sleep.
func TestStart_a_child_dies_with_its_parent_killed_with_SIGKILL(t *testing.T) {
	t.Parallel()
	parent := exec.Command(os.Args[0], "-test.run=^TestHelperStarts$")
	parent.Env = append(os.Environ(), "CHILD_HELPER=1")
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
// killed. Without CHILD_HELPER it does nothing.
func TestHelperStarts(t *testing.T) {
	if os.Getenv("CHILD_HELPER") == "" {
		return
	}
	started := make(chan int)
	go func() { // a goroutine of its own, ended before the parent is killed: only the process matters
		cmd := exec.Command("sleep", "600")
		if err := child.Start(cmd, syscall.SIGKILL); err != nil {
			panic(err)
		}
		started <- cmd.Process.Pid
	}()
	os.Stdout.WriteString(strconv.Itoa(<-started) + "\n")
	time.Sleep(10 * time.Minute)
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
