package engine

import (
	"context"
	"sync"
	"time"
)

// Clock is the time a lease's own timing reads: when it runs out on this host, its heartbeat,
// and how long an extension may take. The real clock is the default; a test drives its own,
// so that a loaded machine's pauses do not move the lease's time. An invocation's deadline
// stays the context's.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed on the clock, unless stopped
	// first (time.AfterFunc).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a Clock's pending call.
type Timer interface {
	// Stop prevents the call, and reports false when it was already made or stopped.
	Stop() bool
}

// realClock is the host's clock.
type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// deadlineOn returns a context that ends at at on clk, with context.DeadlineExceeded as its
// cause; on the real clock it is context.WithDeadline's.
func deadlineOn(ctx context.Context, clk Clock, at time.Time) (context.Context, context.CancelFunc) {
	if _, ok := clk.(realClock); ok {
		return context.WithDeadline(ctx, at)
	}
	bounded, cancel := context.WithCancelCause(ctx)
	t := clk.AfterFunc(at.Sub(clk.Now()), func() { cancel(context.DeadlineExceeded) })
	return bounded, func() { t.Stop(); cancel(context.Canceled) }
}

// ticks sends on the returned channel every d on clk, dropping a tick nobody is ready for (as
// time.Ticker does), until stop is called.
func ticks(clk Clock, d time.Duration) (c <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	var mu sync.Mutex
	stopped := false
	var t Timer
	var tick func()
	tick = func() {
		select {
		case ch <- struct{}{}:
		default:
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			t = clk.AfterFunc(d, tick)
		}
	}
	mu.Lock()
	t = clk.AfterFunc(d, tick)
	mu.Unlock()
	return ch, func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
	}
}
