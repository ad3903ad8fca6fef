package workload_test

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/workload"
)

// smallReport has two consumers: "ledger" committed events 1 ms to 100 ms after the API
// accepted them, "note-tagger" 200 ms to 209 ms after.
func smallReport() *workload.Report {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	rep := &workload.Report{Started: start, Duration: 3 * time.Second, Accepted: 110, Retries: 4, TransientRetries: 1,
		Resent: 2, BrokerDedup: 2, Malformed: 6, Crash: "LedgerFunction killed", Invariants: []workload.Invariant{{Name: "drained", OK: true, Detail: "yes"}},
		Consumers: []workload.ConsumerReport{{Name: "ledger", Applied: 90, Rejected: 10, Malformed: 3, DeadLettered: 3, Redelivered: 7},
			{Name: "note-tagger", Applied: 10, Duplicates: 1, Malformed: 3, DeadLettered: 3}}}
	for i := range 100 {
		at := start.Add(time.Duration(i) * 20 * time.Millisecond)
		rep.AcceptedAt = append(rep.AcceptedAt, at)
		rep.Commits = append(rep.Commits, workload.Commit{Consumer: "ledger", Outcome: "applied", Accepted: at,
			Committed: at.Add(time.Duration(i+1) * time.Millisecond)})
	}
	for i := range 10 {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond)
		rep.Commits = append(rep.Commits, workload.Commit{Consumer: "note-tagger", Outcome: "applied", Accepted: at,
			Committed: at.Add(time.Duration(200+i) * time.Millisecond)})
	}
	return rep
}

func TestReport_Latency_gives_nearest_rank_percentiles_per_consumer(t *testing.T) {
	rep := smallReport()
	for _, tc := range []struct {
		name, consumer     string
		n                  int
		p50, p90, p99, max time.Duration
	}{
		{"one consumer's commits", "ledger", 100, 50 * time.Millisecond, 90 * time.Millisecond, 99 * time.Millisecond, 100 * time.Millisecond},
		{"another consumer's", "note-tagger", 10, 204 * time.Millisecond, 208 * time.Millisecond, 209 * time.Millisecond, 209 * time.Millisecond},
		{"every consumer's together", "", 110, 55 * time.Millisecond, 99 * time.Millisecond, 208 * time.Millisecond, 209 * time.Millisecond},
		{"none for an unknown consumer", "nobody", 0, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rep.Latency(tc.consumer)
			want := workload.Percentiles{N: tc.n, P50: tc.p50, P90: tc.p90, P99: tc.p99, Max: tc.max}
			if got != want {
				t.Errorf("Latency(%q) = %+v; want %+v", tc.consumer, got, want)
			}
		})
	}
}

func TestReport_Print_states_the_latency_percentiles(t *testing.T) {
	var out strings.Builder
	smallReport().Print(&out)
	for _, want := range []string{
		"end-to-end latency, API accepted → consumer committed: p50 55.0ms  p90 99.0ms  p99 208ms  max 209ms (n 110)",
		"latency p99", "99.0ms",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}

func TestReport_WriteHTML_writes_a_self_contained_page_with_a_chart_per_view(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "report.html")
	if err := smallReport().WriteHTML(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	if !strings.HasPrefix(page, "<!DOCTYPE html>") {
		t.Errorf("page starts %q; want <!DOCTYPE html>", page[:min(len(page), 40)])
	}
	if err := wellFormed(page); err != nil {
		t.Errorf("page is not well-formed: %v", err)
	}
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d SVG charts; want 4: the claim, outcomes, latency, throughput", n)
	}
	// The percentiles of smallReport, as the latency table shows them.
	for _, want := range []string{`<td>ledger</td><td class="n">100</td><td class="n">50.0ms</td><td class="n">90.0ms</td><td class="n">99.0ms</td><td class="n">100ms</td>`,
		`<td>all consumers</td><td class="n">110</td><td class="n">55.0ms</td><td class="n">99.0ms</td><td class="n">208ms</td><td class="n">209ms</td>`,
		"p99 208.0 ms", "max 209.0 ms", "note-tagger committed", "messages redelivered to consumers",
		"effects applied twice", "duplicates caught", "deliveries (redeliveries included)"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, banned := range []string{"://", "<script src", "<link", "<img", "@import"} {
		if strings.Contains(page, banned) {
			t.Errorf("page contains %q: it must open offline, with nothing fetched", banned)
		}
	}
	// The proof comes first: the verdict, the invariants, the claim, then the rest.
	order := []string{`id="verdict"`, `id="invariants"`, `id="claim"`, `id="outcomes"`, "Faults: what was injected",
		"Faults: what they caused", "End-to-end latency", "Events per second"}
	for i := 1; i < len(order); i++ {
		if a, b := strings.Index(page, order[i-1]), strings.Index(page, order[i]); a < 0 || b < a {
			t.Errorf("%q (at %d) is not before %q (at %d)", order[i-1], a, order[i], b)
		}
	}
}

// The claim counts, per consumer, outcomes beyond one record per event as effects applied
// twice: zero when the outcomes match the records, the excess when they do not.
func TestReport_claim_counts_outcomes_beyond_one_record_per_event(t *testing.T) {
	rep := smallReport()
	rep.Consumers[0].Records = 100                             // ledger: 90 applied + 10 rejected
	rep.Consumers[1].Records, rep.Consumers[1].Applied = 8, 10 // note-tagger: 2 outcomes without a record of their own
	var out strings.Builder
	if err := rep.RenderHTML(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>ledger effects applied twice: 0</title>", "<title>note-tagger effects applied twice: 2</title>",
		"ledger: 100 outcomes, 100 records; note-tagger: 10 outcomes, 8 records"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// The latency histogram reaches the slowest commit, however far beyond p99 it is.
func TestReport_latency_histogram_reaches_the_maximum(t *testing.T) {
	rep := smallReport()
	rep.Commits = append(rep.Commits, workload.Commit{Consumer: "ledger", Outcome: "applied", Accepted: rep.Started,
		Committed: rep.Started.Add(6980 * time.Millisecond)})
	var out strings.Builder
	if err := rep.RenderHTML(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "max 6980.0 ms") {
		t.Errorf("the histogram has no mark at the maximum, 6980 ms")
	}
	top := 0.0 // the upper bound of the last bin with a commit in it
	for _, m := range regexp.MustCompile(`<title>[0-9.]+–([0-9.]+) ms: [1-9][0-9]*</title>`).FindAllStringSubmatch(out.String(), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		top = max(top, v)
	}
	if top < 6980 {
		t.Errorf("the histogram's last bin with a commit ends at %v ms; want it to hold the 6980 ms commit", top)
	}
}

// wellFormed parses page strictly as XML: every element closed and nested, attributes quoted,
// no stray markup characters.
func wellFormed(page string) error {
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = true
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 {
		return errors.New("unbalanced elements")
	}
	return nil
}

// A chaos run's report shows every fault kind the cloud injected, in the summary and the page.
func TestReport_of_a_chaos_run_shows_the_faults_by_kind(t *testing.T) {
	rep := smallReport()
	rep.Faults = map[string]int{"throttle": 120, "reset-after": 101, "kill-during-invoke": 99}
	rep.Redriven = map[string]int{"malformed message": 9}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := rep.WriteHTML(path); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum strings.Builder
	rep.Print(&sum)
	for _, want := range []string{"cloud fault: throttle", "cloud fault: reset-after", "cloud fault: kill-after-commit", "dead letters redriven",
		"dead-lettered for: 9 malformed message"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, want := range []string{"throttle 120", "reset-after 101", "fewer than 100: ", "kill-during-invoke 99",
		"dead letters redriven to their source queues: 9 (dead-lettered for: 9 malformed message)", "events/s"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, sum.String())
		}
	}
	if got := rep.FaultsBelow(100); len(got) != 6 { // every kind but throttle and reset-after
		t.Errorf("FaultsBelow(100) = %v, want the 5 kinds not injected and kill-during-invoke", got)
	}
}
