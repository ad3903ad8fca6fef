package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A supervisor killed where PID 1 does not reap stays a zombie: it holds its pid, and kill(pid,
// 0) succeeds, but it runs nothing. up and run must not take it for a running cloud.
func TestUp_after_a_supervisor_left_a_zombie_is_not_already_up(t *testing.T) {
	bin := buildCLI(t)
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = zombie.Wait() })
	waitZombie(t, zombie.Process.Pid)
	for _, cmd := range []string{"up", "run"} {
		t.Run(cmd, func(t *testing.T) {
			state := t.TempDir()
			writeState(t, state, zombie.Process.Pid)
			out, _ := exec.Command(bin, cmd, "-state", state, "-template", filepath.Join(state, "missing.yaml")).CombinedOutput()
			if strings.Contains(string(out), "already up") {
				t.Fatalf("%s took the zombie supervisor for a running cloud:\n%s", cmd, out)
			}
			if !strings.Contains(string(out), "missing.yaml") {
				t.Fatalf("%s did not go on to read the template:\n%s", cmd, out)
			}
		})
	}
}

func writeState(t *testing.T, dir string, supervisor int) {
	t.Helper()
	b := []byte(`{"supervisor":` + itoa(supervisor) + `,"processes":[]}`)
	if err := os.WriteFile(filepath.Join(dir, "state.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
