package workload

import (
	"fmt"
	"slices"
	"time"

	"github.com/onceflow/onceflow/pkg/operator"
)

// Commit is one accepted event committed by one consumer: when the API accepted it (the
// event's time, which the API sets as it handles the request, before its own write), and when
// the consumer committed it (the processedAt of its idempotency record). Both clocks are this
// machine's. The time the workload got the API's answer is the fallback for an event without
// a time: it can come after the commit, on a loaded machine.
type Commit struct {
	Consumer  string
	Outcome   string // applied or rejected
	Accepted  time.Time
	Committed time.Time
}

// Latency is the time from the API's acceptance to the consumer's commit.
func (c Commit) Latency() time.Duration { return c.Committed.Sub(c.Accepted) }

// Percentiles summarises a set of latencies (nearest rank).
type Percentiles struct {
	N                  int
	P50, P90, P99, Max time.Duration
}

// String is "p50 12ms  p90 30ms  p99 80ms  max 95ms (n 1200)".
func (p Percentiles) String() string {
	if p.N == 0 {
		return "no commits"
	}
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s (n %d)", ms(p.P50), ms(p.P90), ms(p.P99), ms(p.Max), p.N)
}

// ms prints a duration in milliseconds with one decimal under 100 ms, rounded above.
func ms(d time.Duration) string {
	if d < 100*time.Millisecond {
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return d.Round(time.Millisecond).String()
}

// percentiles returns the nearest-rank percentiles of ds.
func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1 // ceil(p*n) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return Percentiles{N: len(s), P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), Max: s[len(s)-1]}
}

// Latency returns the percentiles of the end-to-end latencies of consumer, or of every
// consumer when consumer is "".
func (r *Report) Latency(consumer string) Percentiles {
	var ds []time.Duration
	for _, c := range r.Commits {
		if consumer == "" || c.Consumer == consumer {
			ds = append(ds, c.Latency())
		}
	}
	return percentiles(ds)
}

// commits pairs each accepted event with the records of its consumers.
func (r *run) commits(recs map[string]operator.Record) []Commit {
	var out []Commit
	for _, q := range r.reqs {
		var typ, id string
		var at time.Time
		switch {
		case q.note != nil && q.note.ID != "":
			typ, id, at = "note.created", noteEventID(q.note.ID), q.note.AcceptedAt
		case q.move != nil && q.move.EventID != "":
			typ, id, at = q.move.Type, q.move.EventID, q.move.AcceptedAt
		default:
			continue
		}
		for _, c := range r.t.consumersOf(typ) {
			rec, ok := recs[operator.Key(c.Name, id)]
			if !ok {
				continue
			}
			done, err := time.Parse(time.RFC3339Nano, rec.ProcessedAt)
			if err != nil {
				continue
			}
			accepted := at
			if t, err := time.Parse(time.RFC3339Nano, rec.OccurredAt); err == nil {
				accepted = t
			}
			if accepted.IsZero() {
				continue
			}
			out = append(out, Commit{Consumer: c.Name, Outcome: rec.Outcome, Accepted: accepted, Committed: done})
		}
	}
	slices.SortFunc(out, func(a, b Commit) int { return a.Committed.Compare(b.Committed) })
	return out
}

// acceptedTimes returns when the API accepted each accepted event, in order.
func (r *run) acceptedTimes() []time.Time {
	var out []time.Time
	for _, q := range r.reqs {
		switch {
		case q.note != nil && !q.note.AcceptedAt.IsZero():
			out = append(out, q.note.AcceptedAt)
		case q.move != nil && !q.move.AcceptedAt.IsZero():
			out = append(out, q.move.AcceptedAt)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}
