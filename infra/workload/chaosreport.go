package workload

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// FaultFloor is how many times a chaos run wants each fault kind injected.
const FaultFloor = 100

// FaultsBelow returns the fault kinds injected fewer than floor times (nil without faults).
func (r *Report) FaultsBelow(floor int) []string {
	if r.Faults == nil {
		return nil
	}
	var out []string
	for _, k := range localcloud.FaultKinds {
		if r.Faults[k] < floor {
			out = append(out, fmt.Sprintf("%s %d", k, r.Faults[k]))
		}
	}
	return out
}

// printChaos writes the faults injected, the redrive and the throughput, when faults were.
func (r *Report) printChaos(w io.Writer) {
	if r.Faults == nil {
		return
	}
	total := 0
	var parts []string
	for _, k := range localcloud.FaultKinds {
		total += r.Faults[k]
		parts = append(parts, fmt.Sprintf("%s %d", k, r.Faults[k]))
	}
	fmt.Fprintf(w, "faults injected: %d (%s)\n", total, strings.Join(parts, ", "))
	if below := r.FaultsBelow(FaultFloor); len(below) > 0 {
		fmt.Fprintf(w, "  fewer than %d: %s (a larger EVENTS or higher rates reach it)\n", FaultFloor, strings.Join(below, ", "))
	}
	redelivered, dups := 0, 0
	for _, c := range r.Consumers {
		redelivered += c.Redelivered
		dups += c.Duplicates
	}
	fmt.Fprintf(w, "redeliveries %d, consumer duplicates detected %d, broker-deduplicated %d\n", redelivered, dups, r.BrokerDedup)
	moved := 0
	var why []string
	for _, k := range slices.Sorted(maps.Keys(r.Redriven)) {
		moved += r.Redriven[k]
		why = append(why, fmt.Sprintf("%d %s", r.Redriven[k], k))
	}
	fmt.Fprintf(w, "dead letters redriven to their source queues: %d", moved)
	if moved > 0 {
		fmt.Fprintf(w, " (dead-lettered for: %s)", strings.Join(why, "; "))
	}
	fmt.Fprintln(w)
	took, in := r.Duration, ""
	if d, ok := r.phaseTook("requests"); ok {
		took, in = d, " (the requests phase)"
	}
	if secs := took.Seconds(); secs > 0 {
		fmt.Fprintf(w, "throughput: %d events accepted in %s%s: %.1f events/s\n", r.Accepted, took, in, float64(r.Accepted)/secs)
	}
	if len(r.Phases) > 0 {
		parts := make([]string, len(r.Phases))
		for i, p := range r.Phases {
			parts[i] = p.Name + " " + p.Took.String()
		}
		fmt.Fprintf(w, "phases: %s\n", strings.Join(parts, " · "))
	}
}

// phaseTook is how long the phase name took, summed over its runs.
func (r *Report) phaseTook(name string) (time.Duration, bool) {
	var d time.Duration
	ok := false
	for _, p := range r.Phases {
		if p.Name == name {
			d, ok = d+p.Took, true
		}
	}
	return d, ok
}
