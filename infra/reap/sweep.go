package reap

import (
	"syscall"
	"time"
)

// Sweep ends every process of run but the caller: SIGTERM first, then SIGKILL to any still
// alive after grace. A process that appears while it sweeps (a test binary the go command
// starts next, an environment a local cloud restarts) is found and ended too. It returns the
// processes it found, and those still alive a second after SIGKILL (none, but for one stuck in
// the kernel).
func Sweep(run string, grace time.Duration) (found, left []Process) {
	termed := map[int]bool{}
	term := func() int { // SIGTERM to each process once: a second one would cut its shutdown short
		procs := Find(run)
		for _, p := range procs {
			if !termed[p.PID] {
				termed[p.PID] = true
				found = append(found, p)
				_ = syscall.Kill(p.PID, syscall.SIGTERM)
			}
		}
		return len(procs)
	}
	kill := func() int {
		procs := Find(run)
		for _, p := range procs {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
		return len(procs)
	}
	if !until(grace, term) && !until(time.Second, kill) {
		return found, Find(run)
	}
	return found, nil
}

// until calls round every 50 ms until it finds no process (true) or d has passed (false).
func until(d time.Duration, round func() int) bool {
	for deadline := time.Now().Add(d); round() > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
