package workload

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/onceflow/onceflow/infra/gatekeeper"
)

// DeniedError is what Run returns with Config.StopOnDenial once the gatekeeper refused a call:
// the first refusal, with the statement that came closest to allowing it and why it did not.
type DeniedError struct {
	Denial gatekeeper.Denial
}

func (e *DeniedError) Error() string {
	return "the gatekeeper refused a call the code makes (AWS would refuse it too): " + e.Denial.Explain()
}

// denialPoll is how often a run looks for a refusal to stop at (Config.StopOnDenial).
const denialPoll = time.Second

// watchDenials stops the run (cancel) at the gatekeeper's first refusal, keeping it.
func (r *run) watchDenials(ctx context.Context, cancel context.CancelFunc) {
	tick := time.NewTicker(denialPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if a := r.cloud.Stats().Access; a != nil && len(a.Denials) > 0 {
			d := a.Denials[0]
			r.denial.Store(&d)
			cancel()
			return
		}
	}
}

// printDenials prints each refusal of the gatekeeper not printed yet, with why, and returns the
// calls denied so far.
func (r *run) printDenials(w io.Writer, a *gatekeeper.Stats) int64 {
	if a == nil {
		return 0
	}
	for _, d := range a.Denials[min(r.shownDenials, len(a.Denials)):] {
		fmt.Fprintf(w, "DENIED %s\n", d.Explain())
	}
	r.shownDenials = len(a.Denials)
	return int64(a.Denied)
}
