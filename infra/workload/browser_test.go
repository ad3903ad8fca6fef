package workload_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/workload"
	"github.com/onceflow/onceflow/pkg/testkit/shorttest"
)

// chromium returns Debian's Chromium, which `make test` installs when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("Chromium is not installed: this test looks at the report in a real browser. `make test` installs it " +
			"(apt-get update && apt-get install -y chromium), or set CHROMIUM to a Chromium binary")
	}
	return p
}

// headless runs Chromium headless on page with a 1280x1000 window and extra flags, offline:
// every host name resolves to nothing. It returns stdout and stderr.
func headless(t *testing.T, page string, flags ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--no-first-run", "--disable-component-update", "--disable-sync", "--user-data-dir=" + t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars", "--window-size=1280,1000",
		"--enable-logging=stderr", "--v=0"}, flags...)
	cmd := exec.CommandContext(ctx, chromium(t), append(args, "file://"+page)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(flags, " "), err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// layout is what the page's script records: the viewport, where the proof's elements sit
// ([top, bottom, width] in CSS pixels), and how many resources the page fetched.
type layout struct {
	Viewport                   [2]int
	Verdict, Invariants, Claim [3]int
	Resources                  int
}

var layoutAttr = regexp.MustCompile(`data-layout="([^"]*)"`)

// The report opens offline in a real browser, its script runs without an error, and the
// verdict, the invariants and the claim chart are on the first 1280x1000 screen, the chart
// full width. A screenshot of that screen is left in .local/report-first-screen.png.
func TestReport_in_a_browser_shows_the_proof_on_the_first_screen(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Chromium: skipped under -short; `make test` installs it and runs this test")
	}
	rep := chaosReport()
	page := filepath.Join(t.TempDir(), "report.html")
	if err := rep.WriteHTML(page); err != nil {
		t.Fatal(err)
	}
	dom, logs := headless(t, page, "--dump-dom")
	if !strings.Contains(dom, `data-rendered="yes"`) {
		t.Fatalf("the page's script did not finish (a script error?); console:\n%s\nDOM:\n%.2000s", logs, dom)
	}
	if strings.Contains(logs, "Uncaught") {
		t.Errorf("the page logged a script error:\n%s", logs)
	}
	m := layoutAttr.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no data-layout in the DOM:\n%.2000s", dom)
	}
	var l layout
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &l); err != nil {
		t.Fatalf("data-layout %q: %v", m[1], err)
	}
	t.Logf("layout: %+v", l)
	if l.Resources != 0 {
		t.Errorf("the page fetched %d resources; it must need none", l.Resources)
	}
	if l.Viewport[0] != 1280 {
		t.Errorf("viewport %v, want 1280 wide", l.Viewport)
	}
	const screen = 1000 // the screenshot's height; --dump-dom's window keeps some for itself
	for name, box := range map[string][3]int{"verdict": l.Verdict, "invariants": l.Invariants, "claim chart": l.Claim} {
		if box[2] == 0 || box[1] > screen {
			t.Errorf("the %s spans %d to %d px (width %d): want it whole on the first %d px", name, box[0], box[1], box[2], screen)
		}
	}
	if l.Verdict[0] > l.Invariants[0] || l.Invariants[0] > l.Claim[0] {
		t.Errorf("order on the page: verdict at %d, invariants at %d, claim at %d; want them in that order", l.Verdict[0], l.Invariants[0], l.Claim[0])
	}
	if l.Claim[2] < 1100 {
		t.Errorf("the claim chart is %d px wide; want the column's full width (1200 px at 1280)", l.Claim[2])
	}

	shot := filepath.Join(repoRoot(t), ".local", "report-first-screen.png")
	if err := os.MkdirAll(filepath.Dir(shot), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(shot)
	headless(t, page, "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width != 1280 || cfg.Height != 1000 {
		t.Fatalf("screenshot %s: %dx%d, %v; want a 1280x1000 PNG", shot, cfg.Width, cfg.Height, err)
	}
	t.Logf("the first screen: %s", shot)
}

func repoRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// chaosReport is smallReport as a chaos run reports it: the invariants of a full run, with
// details as long as theirs, the cloud's faults, the redrive, and a slow tail.
func chaosReport() *workload.Report {
	rep := smallReport()
	rep.Invariants = nil
	for _, inv := range [][2]string{
		{"the pipeline drained", "every consumer queue empty, every accepted event recorded by each of its consumers"},
		{"the API accepted every request, and a retry got the first answer", "20000 requests accepted, 1000 retries answered alike"},
		{"the API refuses requests without a token or without the right", "40 probes: 401 without a token, 403 without the scope or owner"},
		{"every event applied or rejected exactly once per consumer", "one record per consumer and accepted event (20000 events), none other"},
		{"every account balance equals the sum of its accepted events", "200 accounts, 12000 movements"},
		{"every movement's status says what the ledger decided", "12000 movements"},
		{"every account's movements were decided in the order the API accepted them", "200 accounts"},
		{"every tag count equals the notes carrying it", "50 tags over 8000 notes"},
		{"every malformed message is in a dead-letter queue", "12 malformed messages, each dead-lettered once, then redriven and dead-lettered again"},
		{"no queue has stuck messages", "every queue and dead-letter queue as expected"},
		{"an environment crashed after commit and the pipeline recovered", "LedgerFunction killed after a committed batch, restarted, its batch redelivered"},
	} {
		rep.Invariants = append(rep.Invariants, workload.Invariant{Name: inv[0], OK: true, Detail: inv[1]})
	}
	rep.Faults = map[string]int{"throttle": 320, "server-error": 301, "txn-conflict": 288, "reset-before": 310,
		"reset-after": 295, "latency": 330, "kill-during-invoke": 255, "kill-after-commit": 276}
	rep.Redriven = map[string]int{"malformed message": 6}
	rep.Resent, rep.ResentMsgs, rep.BrokerDedup = 120, 138, 138
	rep.Consumers[0].Delivered, rep.Consumers[0].Duplicates, rep.Consumers[0].Records = 1340, 212, 100
	rep.Consumers[1].Delivered, rep.Consumers[1].Records = 31, 10
	rep.Commits = append(rep.Commits, workload.Commit{Consumer: "ledger", Outcome: "applied", Accepted: rep.Started,
		Committed: rep.Started.Add(6980 * time.Millisecond)})
	return rep
}

// `go test -short ./...` passes on a fresh clone without Chromium: the browser test skips
// there, saying how to run it.
func TestReport_browser_test_skips_under_short_without_Chromium(t *testing.T) {
	t.Setenv("CHROMIUM", "")
	shorttest.Skips(t, "TestReport_in_a_browser_shows_the_proof_on_the_first_screen")
}
