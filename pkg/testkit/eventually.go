package testkit

import (
	"testing"
	"time"
)

// Eventually retries check every 200 ms until it returns nil, and fails the test with check's
// last error once timeout has passed.
func Eventually(tb testing.TB, timeout time.Duration, check func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("after %s: %v", timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
