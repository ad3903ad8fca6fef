package applytest

import (
	"slices"
	"sync"
	"time"

	"github.com/onceflow/onceflow/pkg/internal/engine"
)

// Clock is a clock a test drives: its time moves only when Advance moves it, so a loaded
// machine's pauses never make a lease run out or a heartbeat fire. It is safe for concurrent
// use.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	pending []*clockCall
}

// clockCall is a function due at a time on a Clock.
type clockCall struct {
	c    *Clock
	at   time.Time
	f    func()
	done bool
}

// NewClock returns a Clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start.Round(0)} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc calls f once the clock has moved d on.
func (c *Clock) AfterFunc(d time.Duration, f func()) engine.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := &clockCall{c: c, at: c.now.Add(d), f: f}
	c.pending = append(c.pending, call)
	return call
}

// Stop cancels the call, and reports false when it was already made or stopped.
func (t *clockCall) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	return true
}

// Advance moves the clock d on, making each call that falls due on the way, in time order,
// each at its own instant; a call made by one of them is made too if it falls due by then.
// Advance makes the calls itself, one after the other, and returns after the last.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		call := c.next(end)
		if call == nil {
			return
		}
		call.f()
	}
}

// next takes the earliest call due by end and sets the clock to its instant, or sets the
// clock to end and returns nil when none is.
func (c *Clock) next(end time.Time) *clockCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := c.pending[:0]
	for _, p := range c.pending {
		if !p.done {
			live = append(live, p)
		}
	}
	c.pending = live
	slices.SortStableFunc(c.pending, func(a, b *clockCall) int { return a.at.Compare(b.at) }) // same instant: in the order made
	if len(c.pending) == 0 || c.pending[0].at.After(end) {
		c.now = end
		return nil
	}
	call := c.pending[0]
	call.done = true
	c.now = call.at
	return call
}
