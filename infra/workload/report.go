package workload

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/onceflow/onceflow/infra/gatekeeper"
)

// Report is what a workload did and whether the invariants held.
type Report struct {
	Started  time.Time
	Duration time.Duration // from the first request to the last drain, verification not included
	Phases   []Phase       // the run's phases in order, verification included

	// API traffic, counted by the workload's client.
	Requests         int         // HTTP requests sent, every attempt
	Retries          int         // deliberate retries with the same Idempotency-Key or reference
	TransientRetries int         // attempts repeated after a 5xx or a network error
	Failed           int         // logical requests that never got a 2xx
	Status           map[int]int // answers by HTTP status
	APIInvocations   int         // invocations of the API function (the cloud's stats)

	// Events.
	Accepted                         int // distinct events the API accepted
	OutboxItems                      int // outbox items in the app table
	Published                        int // messages the relay published (its Published metric)
	RelayRecords, RelayFailedBatches int // stream records the relay's mapping delivered, and failed invocations
	Resent                           int // events re-sent to their queues under a new deduplication id
	ResentMsgs                       int // messages those re-sends created (one per routed queue)
	BrokerDedup                      int // repeated sends SQS deduplicated
	Malformed                        int // malformed messages injected, over all consumer queues

	Consumers []ConsumerReport
	// Commits are the accepted events' commits, one per consumer and event, in commit order;
	// AcceptedAt are the times the API accepted each event.
	Commits    []Commit
	AcceptedAt []time.Time
	Memory     []FunctionMemory // per function, by logical id

	Crash string // what the crash injection did
	// Faults are the faults the cloud injected by kind (localcloud.Stats.Faults), nil without;
	// Redriven the dead letters moved back to their source queues, by why they were dead-lettered.
	Faults   map[string]int
	Redriven map[string]int
	Webhook  string // what the webhook receiver saw, "" without a notifier
	Drill    Drill  // the recovery drill, zero without one (Config.Poison)
	// Access is what the local cloud's gatekeeper authorised and denied (localcloud.Stats.Access),
	// nil when it ran without one (localcloud.Config.Ungated).
	Access     *gatekeeper.Stats
	Invariants []Invariant
}

// Phase is a phase of the run (requests, drill, settling, redriving, draining, re-sending,
// draining re-sends, verifying) and how long it took.
type Phase struct {
	Name string
	Took time.Duration
}

// Drill counts what the recovery drill did with the operator's CLI.
type Drill struct {
	Poisoned   []string // accounts poisoned with a producer's bad message, each "account (kind)"
	HeldBehind int      // live movements held behind the bad messages when the drill found them
	Discarded  int      // letters discarded (dlq discard)
	Skipped    int      // blockers skipped (hold skip)
	Requeued   int      // skipped letters redriven after their held tail, dead-lettered again unheld, then discarded
	Returned   int      // discarded events the producer sent again, answered from their records (no letter, no hold)
	Redriven   int      // letters moved by its redrives (dlq redrive)
	Redrives   int      // redrives it ran until nothing was held
	Commands   int      // CLI commands it ran
}

// ConsumerReport counts the work of one consumer.
type ConsumerReport struct {
	Name, Function string
	Delivered      int // messages delivered by the event source mapping, redeliveries included
	Acknowledged   int // deleted after an invocation
	Redelivered    int // delivered again after a failed item, a failed invocation or a crash
	Applied        int // Applied metric
	Duplicates     int // Duplicate metric
	Rejected       int // Rejected metric
	Malformed      int // Malformed metric
	DeadLettered   int // DeadLettered metric
	Records        int // idempotency records of this consumer
	DLQDepth       int // messages in its dead-letter queue
	Restarts       int // environments restarted
}

// FunctionMemory is how much memory a function's bootstrap used, against its MemorySize.
type FunctionMemory struct {
	Function     string
	PeakRSSKiB   int // largest VmHWM of its bootstrap processes
	LargestBatch int // most records one invocation got from its event sources (0: HTTP API)
	MemorySize   int // MB, from the template
}

// Invariant is one checked property.
type Invariant struct {
	Name   string
	OK     bool
	Detail string // what was compared, or what failed
}

// OK reports whether every invariant holds.
func (r *Report) OK() bool {
	for _, inv := range r.Invariants {
		if !inv.OK {
			return false
		}
	}
	return len(r.Invariants) > 0
}

// printDrill writes what the recovery drill did, when there was one.
func (r *Report) printDrill(w io.Writer) {
	d := r.Drill
	if len(d.Poisoned) == 0 {
		return
	}
	fmt.Fprintf(w, "recovery drill: %d accounts poisoned mid-run (%s), %d live movements held behind them\n",
		len(d.Poisoned), strings.Join(d.Poisoned, ", "), d.HeldBehind)
	fmt.Fprintf(w, "  with the CLI: %d letters discarded, %d skipped, %d redriven in %d redrives (%d commands)\n",
		d.Discarded, d.Skipped, d.Redriven, d.Redrives, d.Commands)
	fmt.Fprintf(w, "  %d skipped letters came back after their held tail, unheld, and were discarded; %d discarded events sent again were answered from their records\n",
		d.Requeued, d.Returned)
	if d.Redrives > 1 {
		fmt.Fprintln(w, "  (a redrive again: live movements of a held account dead-lettered while one ran come after it, and letters behind their group's head are out of its view)")
	}
}

// Print writes the summary table and the invariants.
func (r *Report) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(label string, v ...any) {
		cells := make([]string, len(v))
		for i, x := range v {
			cells[i] = fmt.Sprint(x)
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", label, strings.Join(cells, "\t"))
	}
	fmt.Fprintf(w, "\nonceflow workload: done in %s\n\n", r.Duration)
	row("API requests (HTTP, every attempt)", r.Requests)
	row("  deliberate retries (same key / reference)", r.Retries)
	row("  retries after a 5xx or network error", r.TransientRetries)
	row("  API function invocations", r.APIInvocations)
	row("  requests never accepted", r.Failed)
	row("events accepted (distinct)", r.Accepted)
	row("outbox items", r.OutboxItems)
	row("stream records delivered to the relay (failed batches)", fmt.Sprintf("%d (%d)", r.RelayRecords, r.RelayFailedBatches))
	row("events published by the relay (messages)", r.Published)
	row("events re-sent with a new dedup id (messages)", fmt.Sprintf("%d (%d)", r.Resent, r.ResentMsgs))
	row("broker-deduplicated (repeated sends)", r.BrokerDedup)
	row("malformed messages injected", r.Malformed)
	tw.Flush()
	fmt.Fprintln(w)
	head := []any{}
	for _, c := range r.Consumers {
		head = append(head, c.Name)
	}
	row("consumer", head...)
	col := func(label string, f func(ConsumerReport) int) {
		v := []any{}
		for _, c := range r.Consumers {
			v = append(v, f(c))
		}
		row(label, v...)
	}
	col("delivered (with redeliveries)", func(c ConsumerReport) int { return c.Delivered })
	col("acknowledged", func(c ConsumerReport) int { return c.Acknowledged })
	col("redelivered (retries)", func(c ConsumerReport) int { return c.Redelivered })
	col("applied", func(c ConsumerReport) int { return c.Applied })
	col("consumer duplicates", func(c ConsumerReport) int { return c.Duplicates })
	col("rejected", func(c ConsumerReport) int { return c.Rejected })
	col("malformed", func(c ConsumerReport) int { return c.Malformed })
	col("dead-lettered", func(c ConsumerReport) int { return c.DeadLettered })
	col("in dead-letter queue", func(c ConsumerReport) int { return c.DLQDepth })
	col("idempotency records", func(c ConsumerReport) int { return c.Records })
	col("environments restarted", func(c ConsumerReport) int { return c.Restarts })
	lat := func(label string, f func(Percentiles) time.Duration) {
		v := []any{}
		for _, c := range r.Consumers {
			v = append(v, ms(f(r.Latency(c.Name))))
		}
		row(label, v...)
	}
	lat("latency p50 (API accepted → committed)", func(p Percentiles) time.Duration { return p.P50 })
	lat("latency p90", func(p Percentiles) time.Duration { return p.P90 })
	lat("latency p99", func(p Percentiles) time.Duration { return p.P99 })
	tw.Flush()
	fmt.Fprintf(w, "\nend-to-end latency, API accepted → consumer committed: %s\n\n", r.Latency(""))
	row("function", "peak RSS", "largest batch", "MemorySize")
	for _, m := range r.Memory {
		row(m.Function, fmt.Sprintf("%.1f MiB", float64(m.PeakRSSKiB)/1024), m.LargestBatch, fmt.Sprintf("%d MB", m.MemorySize))
	}
	tw.Flush()
	fmt.Fprintf(w, "\ncrash: %s\n", r.Crash)
	r.printChaos(w)
	r.printDrill(w)
	if r.Webhook != "" {
		fmt.Fprintf(w, "webhook: %s\n", r.Webhook)
	}
	if r.Access != nil {
		fmt.Fprintln(w, r.Access.Summary())
	} else {
		fmt.Fprintln(w, "gatekeeper: off (ungated: no call authorised)")
	}
	fmt.Fprintln(w, "\ninvariants:")
	for _, inv := range r.Invariants {
		verdict := "PASS"
		if !inv.OK {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %s: %s\n", verdict, inv.Name, inv.Detail)
	}
}
