package testkit

import (
	"sync"
	"time"
)

// Clock is a time source a test moves: give its Now to idempotency.Config.Now, then Advance it
// past the Retention to deliver an event after its record expired. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at the current time.
func NewClock() *Clock { return &Clock{now: time.Now()} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// ExpireRecords moves the clock past retention (the consumer's idempotency.Config.Retention,
// or idempotency.DefaultRetention): every record committed before has expired, and an event
// delivered now is applied again unless the handler's own writes stop it (OrDuplicate).
func (c *Clock) ExpireRecords(retention time.Duration) { c.Advance(retention + time.Second) }
