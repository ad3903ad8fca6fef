package workload

import (
	_ "embed"
	"fmt"
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
// created): tables and inline SVG charts, nothing fetched, so it opens offline.
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

// page is what the HTML template shows, the proof first: the verdict, the invariants and the
// claim chart, then what was injected and what it caused, then latency and throughput.
type page struct {
	Started, Duration string
	Accepted, Commits int
	OK, Chaos         bool
	Passed, Checked   int
	Invariants        []Invariant
	ClaimChart        chart
	Claim             []claimRow
	OutcomeChart      chart
	Injected, Caused  []factRow
	Latency           []latencyRow
	LatencyChart      chart
	ThroughputChart   chart
	Crash, Webhook    string
	Gatekeeper        string // its summary line
}

type latencyRow struct {
	Name               string
	N                  int
	P50, P90, P99, Max string
}

func (r *Report) page() page {
	p := page{Started: r.Started.UTC().Format(time.RFC3339), Duration: r.Duration.String(), Accepted: r.Accepted,
		Commits: len(r.Commits), OK: r.OK(), Chaos: r.Faults != nil, Checked: len(r.Invariants), Crash: r.Crash, Webhook: r.Webhook,
		Invariants: r.Invariants}
	if r.Access != nil {
		p.Gatekeeper = r.Access.Summary()
	}
	for _, inv := range r.Invariants {
		if inv.OK {
			p.Passed++
		}
	}
	for _, name := range append(r.consumerNames(), "") {
		l := r.Latency(name)
		label := name
		if name == "" {
			label = "all consumers"
		}
		p.Latency = append(p.Latency, latencyRow{label, l.N, ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max)})
	}
	p.ClaimChart, p.Claim = r.claimChart()
	p.OutcomeChart = r.outcomeChart()
	p.Injected, p.Caused = r.injected(), r.caused()
	p.LatencyChart = r.latencyChart()
	p.ThroughputChart = r.throughputChart()
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

// latencyChart is the histogram of every commit's latency, up to the slowest.
func (r *Report) latencyChart() chart {
	values := make([]float64, len(r.Commits))
	for i, c := range r.Commits {
		values[i] = millis(c.Latency())
	}
	l := r.Latency("")
	return histogram("End-to-end latency, every consumer: commits per latency bin", "milliseconds from API acceptance to consumer commit",
		values, 48, []mark{{"p50", millis(l.P50)}, {"p90", millis(l.P90)}, {"p99", millis(l.P99)}, {"max", millis(l.Max)}})
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
	var rows []barRow
	for _, c := range r.Consumers {
		for i, v := range []int{c.Applied, c.Duplicates, c.Rejected, c.Malformed, c.DeadLettered} {
			rows = append(rows, barRow{Group: c.Name, Label: cats[i], Value: float64(v), Series: i})
		}
	}
	var legend []legendEntry
	for i, n := range cats {
		legend = append(legend, legendEntry{Name: n, Series: i})
	}
	return hbars("outcomes", "Outcomes per consumer (the engine's metrics)", rows, legend)
}
