package localcloud

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// State records the processes a local cloud started, so that Down, from another process, stops
// exactly those by process id. It lives in StateDir/state.json.
type State struct {
	// Supervisor is the process that runs the pollers and servers (the CLI's serve), 0 when
	// the cloud runs inside a test or another program.
	Supervisor int            `json:"supervisor,omitempty"`
	Processes  []ProcessState `json:"processes"`
}

// ProcessState is one child process; each leads its own process group.
type ProcessState struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
}

// ReadState reads StateDir/state.json.
func ReadState(stateDir string) (State, error) {
	var s State
	b, err := os.ReadFile(filepath.Join(stateDir, "state.json"))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

// Running returns the supervisor recorded in stateDir when it still runs. A supervisor that
// exited is not running even while its pid lingers as an unreaped zombie, as it does in a
// container whose PID 1 does not reap orphans.
func Running(stateDir string) (supervisor int, ok bool) {
	s, err := ReadState(stateDir)
	if err != nil || s.Supervisor <= 0 || !alive(s.Supervisor) {
		return 0, false
	}
	return s.Supervisor, true
}

// Down stops the local cloud recorded in stateDir: it asks the supervisor to stop (which stops
// its children), then kills the process group of every recorded process still alive. It is
// a no-op when nothing is recorded.
func Down(stateDir string) error {
	_, err := Stop(stateDir)
	return err
}

// Stop is Down, returning what it stopped: the supervisor and each recorded process that was
// running, as "name (pid N)"; none when nothing was recorded or everything had ended.
func Stop(stateDir string) (stopped []string, err error) {
	s, err := ReadState(stateDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("down: %w", err)
	}
	var running []ProcessState
	for _, p := range s.Processes {
		if alive(p.PID) {
			running = append(running, p)
		}
	}
	if s.Supervisor > 0 && s.Supervisor != os.Getpid() && alive(s.Supervisor) {
		_ = syscall.Kill(s.Supervisor, syscall.SIGTERM)
		waitGone(s.Supervisor, 20*time.Second)
		stopped = append(stopped, fmt.Sprintf("supervisor (pid %d)", s.Supervisor))
	}
	var errs []error
	for _, p := range running {
		if alive(p.PID) {
			_ = syscall.Kill(-p.PID, syscall.SIGTERM)
			if !waitGone(p.PID, 5*time.Second) {
				_ = syscall.Kill(-p.PID, syscall.SIGKILL)
				if !waitGone(p.PID, 5*time.Second) {
					errs = append(errs, fmt.Errorf("down: %s (pid %d) still running", p.Name, p.PID))
					continue
				}
			}
		}
		stopped = append(stopped, fmt.Sprintf("%s (pid %d)", p.Name, p.PID))
	}
	if s.Supervisor > 0 && alive(s.Supervisor) {
		_ = syscall.Kill(s.Supervisor, syscall.SIGKILL)
	}
	if len(errs) == 0 {
		_ = os.Remove(filepath.Join(stateDir, "state.json"))
		_ = os.Remove(filepath.Join(stateDir, "endpoints.json"))
	}
	return stopped, errors.Join(errs...)
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == ')' && i+2 < len(b) {
			return b[i+2] != 'Z'
		}
	}
	return true
}

func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !alive(pid)
}
