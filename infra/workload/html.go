package workload

import (
	_ "embed"
	"fmt"
	"github.com/onceflow/onceflow/infra/localcloud"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

//go:embed report.html.tmpl
var reportHTML string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"f": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
}).Parse(reportHTML))

// WriteHTML writes the report as one self-contained HTML page to path (its directory is
// created): tables and inline SVG charts, no script and nothing fetched, so it opens offline.
func (r *Report) WriteHTML(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := r.RenderHTML(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// RenderHTML writes the report's HTML page to w.
func (r *Report) RenderHTML(w io.Writer) error {
	if err := reportTemplate.Execute(w, r.page()); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

// page is what the HTML template shows.
type page struct {
	Started, Duration string
	Accepted, Commits int
	OK                bool
	Latency           []latencyRow
	LatencyChart      chart
	ThroughputChart   chart
	OutcomeChart      chart
	FaultChart        chart
	Crash, Webhook    string
	Invariants        []Invariant
}

type latencyRow struct {
	Name               string
	N                  int
	P50, P90, P99, Max string
}

func (r *Report) page() page {
	p := page{Started: r.Started.UTC().Format(time.RFC3339), Duration: r.Duration.String(), Accepted: r.Accepted,
		Commits: len(r.Commits), OK: r.OK(), Crash: r.Crash, Webhook: r.Webhook, Invariants: r.Invariants}
	for _, name := range append(r.consumerNames(), "") {
		l := r.Latency(name)
		label := name
		if name == "" {
			label = "all consumers"
		}
		p.Latency = append(p.Latency, latencyRow{label, l.N, ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max)})
	}
	p.LatencyChart = r.latencyChart()
	p.ThroughputChart = r.throughputChart()
	p.OutcomeChart = r.outcomeChart()
	p.FaultChart = r.faultChart()
	return p
}

func (r *Report) consumerNames() []string {
	var out []string
	for _, c := range r.Consumers {
		out = append(out, c.Name)
	}
	return out
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (r *Report) latencyChart() chart {
	values := make([]float64, len(r.Commits))
	for i, c := range r.Commits {
		values[i] = millis(c.Latency())
	}
	l := r.Latency("")
	// Up to a little above p99, so that a few late commits (a crash's batch, redelivered after
	// its visibility timeout) do not squash the rest into one bar.
	return histogram("End-to-end latency, every consumer", values, millis(l.P99)*1.1, 40,
		[]mark{{"p50", millis(l.P50)}, {"p90", millis(l.P90)}, {"p99", millis(l.P99)}})
}

// throughputChart counts, per second since the start, the events the API accepted and the
// commits of each consumer.
func (r *Report) throughputChart() chart {
	perSecond := func(name string, ts []time.Time) series {
		var counts []float64
		for _, t := range ts {
			s := max(int(t.Sub(r.Started)/time.Second), 0)
			for len(counts) <= s {
				counts = append(counts, 0)
			}
			counts[s]++
		}
		out := series{Name: name}
		for i, n := range counts {
			out.X, out.Y = append(out.X, float64(i)), append(out.Y, n)
		}
		return out
	}
	ss := []series{perSecond("API accepted", r.AcceptedAt)}
	for _, name := range r.consumerNames() {
		var ts []time.Time
		for _, c := range r.Commits {
			if c.Consumer == name {
				ts = append(ts, c.Committed)
			}
		}
		ss = append(ss, perSecond(name+" committed", ts))
	}
	return lines("Events per second", "seconds since the start of the run", "per second", ss)
}

func (r *Report) outcomeChart() chart {
	cats := []string{"applied", "duplicates", "rejected", "malformed", "dead-lettered"}
	var gs []group
	for _, c := range r.Consumers {
		gs = append(gs, group{c.Name, []float64{float64(c.Applied), float64(c.Duplicates), float64(c.Rejected),
			float64(c.Malformed), float64(c.DeadLettered)}})
	}
	return groupedBars("Outcomes per consumer (the engine's metrics)", "messages", cats, gs)
}

func (r *Report) faultChart() chart {
	labels := []string{"API retries, same key or reference", "API retries after a 5xx or network error",
		"events re-sent under a new dedup id", "re-sends deduplicated by SQS", "malformed messages injected",
		"relay batches failed"}
	values := []float64{float64(r.Retries), float64(r.TransientRetries), float64(r.Resent), float64(r.BrokerDedup),
		float64(r.Malformed), float64(r.RelayFailedBatches)}
	for _, c := range r.Consumers {
		labels = append(labels, c.Name+": messages redelivered", c.Name+": environments restarted")
		values = append(values, float64(c.Redelivered), float64(c.Restarts))
	}
	if r.Faults != nil { // make chaos: the cloud's faults by kind, and the dead letters redriven
		for _, k := range localcloud.FaultKinds {
			labels, values = append(labels, "injected: "+k), append(values, float64(r.Faults[k]))
		}
		moved := 0
		for _, n := range r.Redriven {
			moved += n
		}
		labels, values = append(labels, "dead letters redriven"), append(values, float64(moved))
	}
	if d := r.Drill; len(d.Poisoned) > 0 { // the recovery drill, with the operator's CLI
		labels = append(labels, "drill: accounts poisoned", "drill: movements held behind", "drill: letters discarded",
			"drill: blockers skipped", "drill: letters redriven")
		values = append(values, float64(len(d.Poisoned)), float64(d.HeldBehind), float64(d.Discarded), float64(d.Skipped), float64(d.Redriven))
	}
	return bars("Faults injected and redeliveries", labels, values)
}
