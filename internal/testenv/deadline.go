package testenv

import (
	"context"
	"testing"
	"time"
)

// BeforeTimeout returns a context that ends a minute before go test's -timeout stops the test
// binary (or with the test, without a -timeout). A test whose work grows with the machine's
// load (a cloud's start, a chaos run) bounds it so rather than by a guess of its own, which a
// loaded machine outruns, and still fails with its own message rather than the binary's panic.
func BeforeTimeout(t *testing.T) context.Context {
	deadline, ok := t.Deadline()
	if !ok {
		return t.Context()
	}
	ctx, cancel := context.WithDeadline(t.Context(), deadline.Add(-time.Minute))
	t.Cleanup(cancel)
	return ctx
}
