package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/onceflow/onceflow/pkg/idempotency"
)

// refused explains a conditional write refused because the item changed since it was shown:
// it prints the item as it is now (read by now), and returns an error saying nothing was done.
func refused(ctx context.Context, err error, s ioStreams, now func() (any, bool, error)) error {
	if !errors.Is(err, idempotency.ErrChanged) {
		return err
	}
	v, ok, rerr := now()
	switch {
	case rerr != nil:
		fmt.Fprintf(s.out, "it changed since it was shown, and reading it again failed: %v\n", rerr)
	case !ok:
		fmt.Fprintln(s.out, "it changed since it was shown: it is gone now")
	default:
		fmt.Fprintln(s.out, "it changed since it was shown; it is now:")
		printJSON(s, v)
	}
	return fmt.Errorf("refused, nothing written: %w (look again and decide on what is there now)", err)
}
