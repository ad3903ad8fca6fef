package workload

import "sync"

// Crash is a one-time crash after commit: its Hook, given to localcloud.Config.CrashAfterInvoke,
// answers true once, on the After-th successful invocation of Function, so that environment is
// killed after its effects were committed and before the poller saw the answer. It is safe for
// concurrent use.
type Crash struct {
	Function string
	After    int

	mu    sync.Mutex
	seen  int
	fired bool
}

// Hook is the localcloud.Config.CrashAfterInvoke function.
func (c *Crash) Hook(function string) bool {
	if c == nil || function != c.Function {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen++
	if c.fired || c.seen < max(c.After, 1) {
		return false
	}
	c.fired = true
	return true
}

// Fired reports whether the crash happened.
func (c *Crash) Fired() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired
}
