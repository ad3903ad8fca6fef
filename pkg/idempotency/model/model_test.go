package model_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// check is one run of the model checker: a model (recovery, the protocol the code follows;
// today, the protocol before issue 26) in one scenario, for safety (assertions) or liveness
// (the LTL property live, with or without weak fairness), and whether it must pass.
type check struct {
	model   string // recovery or today
	scen    int
	defines []string // more -D flags: BREAK=n, ...
	live    bool
	fair    bool // liveness under weak fairness (pan -f)
	fails   bool // the check must find a counterexample
	why     string
	big     bool // hundreds of millions of states: run alone, with most of the machine's memory
}

func (c check) name() string {
	kind := "safety"
	if c.live {
		kind = "live"
		if c.fair {
			kind = "live-fair"
		}
	}
	n := fmt.Sprintf("%s/scen%d/%s", c.model, c.scen, kind)
	for _, d := range c.defines {
		n += "/" + strings.ReplaceAll(d, "=", "")
	}
	return n
}

// ids is the model's bound on message ids in use at once (env.pml's MMAX): a send takes the
// smallest id nothing refers to any more, so a run that redrives without end repeats its states
// instead of running out. Running out is an assertion of its own ("a model bound"), never a
// cycle: a check that meets it fails, saying so.
const ids = "MMAX=16"

// quick is the set make test runs: the protocol passes every scenario of issue 26's cases
// (safety and liveness), today's protocol fails each of them, and each deliberately broken step
// fails, so the checks are proven able to fail.
func quick() []check {
	var cs []check
	for _, s := range []int{1, 2, 3, 4, 5, 6, 7, 8, 16} {
		cs = append(cs, check{model: "recovery", scen: s})
		if !slowLive(s) {
			cs = append(cs, check{model: "recovery", scen: s, live: true})
		}
	}
	for _, s := range []int{1, 2, 3, 4, 5, 7, 16} {
		cs = append(cs, check{model: "today", scen: s, live: true, fails: true, why: "issue 26's case on today's protocol"})
	}
	for _, s := range []int{6, 8} {
		cs = append(cs, check{model: "today", scen: s, fails: true, why: "issue 26's case on today's protocol (order)"})
	}
	for _, b := range []struct {
		brk, scen int
		live      bool
	}{{1, 5, true}, {2, 4, false}, {3, 6, false}, {4, 1, true}, {5, 7, true}} {
		cs = append(cs, check{model: "recovery", scen: b.scen, live: b.live, fails: true,
			defines: []string{"BREAK=" + strconv.Itoa(b.brk)}, why: "a step broken deliberately"})
	}
	return cs
}

// slowLive reports whether scenario s's liveness check of the protocol explores millions of
// states (minutes on a shared 2-core machine): make model runs it, make test does not (its
// safety check, and the broken step that must fail it, stay in the set).
func slowLive(s int) bool { return s == 6 || s == 7 || s == 16 }

// longSearch reports whether a check of the set make test runs stores a million states or more
// (the protocol in scenarios 1, 2, 4, 6, 7, 8 and 16, measured): its search takes longer than
// compiling it with optimisation.
func longSearch(c check) bool {
	return c.model == "recovery" && len(c.defines) == 0 && c.scen != 3 && c.scen != 5
}

// bigLive and bigSafety report whether a check of scenario s stores hundreds of millions of
// states (tens of GB): make model runs each of those alone, before the others.
func bigLive(s int) bool   { return s == 9 || s == 12 || s == 13 || s == 15 }
func bigSafety(s int) bool { return s == 12 || s == 13 || s == 15 }

// all is the whole matrix make model runs: every scenario of both models, liveness also under
// weak fairness, and the broken steps.
func all() []check {
	cs := quick()
	for _, s := range []int{6, 7, 16} {
		cs = append(cs, check{model: "recovery", scen: s, live: true})
	}
	for _, s := range []int{9, 10, 11, 12, 13, 14, 15} {
		cs = append(cs, check{model: "recovery", scen: s, big: bigSafety(s)}, check{model: "recovery", scen: s, live: true, big: bigLive(s)})
	}
	for _, s := range []int{1, 2, 3, 4, 5, 6, 7, 8, 16} {
		cs = append(cs, check{model: "recovery", scen: s, live: true, fair: true})
	}
	return cs
}

// TestModel_recovery_protocol runs the model checker (SPIN) over the recovery protocol's model:
// the set make test runs, or with MODEL=all (make model) the whole matrix. A check that must
// pass and finds a counterexample fails with its trail; one that must fail and does not fails
// too. Each check logs the states it explored and its time. Under -short it skips.
func TestModel_recovery_protocol(t *testing.T) {
	if testing.Short() {
		t.Skip("the model's checks take minutes and need SPIN and a C compiler: `make test` installs them and runs the fast set, `make model` the whole matrix")
	}
	spin, cc := tool(t, "spin"), tool(t, "gcc")
	cs := quick()
	if os.Getenv("MODEL") == "all" {
		cs = all()
	}
	src, err := filepath.Glob("*.pml")
	if err != nil || len(src) == 0 {
		t.Fatalf("no model files (*.pml) beside the test: %v", err)
	}
	for _, c := range cs {
		// A big check runs alone, in the loop; the others (t.Parallel) wait for the loop's end
		// and then run as many at a time as go test's -parallel allows (make model: 2, as
		// memory assumes).
		t.Run(c.name(), func(t *testing.T) {
			if !c.big {
				t.Parallel()
			}
			r := run(t, spin, cc, src, c)
			t.Logf("%s: %d states stored, %s, %s", c.name(), r.states, r.took.Round(10*time.Millisecond), r.verdict())
			switch {
			case r.errors > 0 && !c.fails:
				t.Errorf("counterexample (%s):\n%s", r.what, r.trail)
			case r.errors == 0 && c.fails:
				t.Errorf("no counterexample, but %s must have one", c.why)
			case c.fails && !strings.Contains(r.trail, "MSC:"):
				t.Errorf("counterexample without a trail that replays:\n%s", r.trail)
			case c.fails:
				t.Logf("counterexample, as it must (%s): %s\n%s", c.why, r.what, shorten(r.trail, 40))
			}
		})
	}
}

// result is what one check found.
type result struct {
	errors int
	states int
	took   time.Duration
	what   string // the violated assertion, or the acceptance cycle
	trail  string // spin -t's account of the counterexample, the model's own lines
}

func (r result) verdict() string {
	if r.errors > 0 {
		return "counterexample: " + r.what
	}
	return "no counterexample"
}

var (
	errorsLine = regexp.MustCompile(`errors: (\d+)`)
	statesLine = regexp.MustCompile(`(\d+) states, stored`)
	whatLine   = regexp.MustCompile(`pan:\d+: (.*)`)
)

// run compiles and runs one check in a directory of its own, and replays its trail if it found
// a counterexample.
func run(t *testing.T, spin, cc string, src []string, c check) result {
	dir := t.TempDir()
	for _, f := range src {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defs := []string{"-DSCEN=" + strconv.Itoa(c.scen)}
	for _, d := range append([]string{ids}, c.defines...) {
		defs = append(defs, "-D"+d)
	}
	model := c.model + ".pml"
	do(t, dir, spin, append(append([]string{"-a"}, defs...), model)...)
	// The set make test runs is compiled without optimisation: a model's pan.c compiles in a
	// second that way, against ten at -O2; a check of a million states or more is compiled at
	// -Og, in three seconds, which halves its search (scenario 6's safety: 28 s at -O0, 14 s).
	opt := "-O0"
	if longSearch(c) {
		opt = "-Og"
	}
	ccArgs := []string{opt, "-o", "pan", "pan.c"}
	panArgs := []string{"-m1000000"}
	if os.Getenv("MODEL") == "all" {
		// The whole matrix has checks of hundreds of millions of states: compiled at -O2, the
		// states stored compressed (COLLAPSE, exact), each search bounded in memory (a search
		// that runs out says so and fails), its hash table sized once (NO_RESIZE, -w): pan's
		// own resizing allocates a table four times the size beside the old one, and was what
		// ran out first.
		mb := memory(t, c.big)
		ccArgs = []string{"-O2", "-DCOLLAPSE", "-DNO_RESIZE", "-DMEMLIM=" + strconv.Itoa(mb), "-o", "pan", "pan.c"}
		panArgs = append(panArgs, "-w"+strconv.Itoa(hashBits(mb)))
	}
	if c.live {
		panArgs = append(panArgs, "-a")
		if c.fair {
			panArgs = append(panArgs, "-f")
		}
	} else {
		ccArgs = append([]string{"-DSAFETY", "-DNOCLAIM"}, ccArgs...)
		panArgs = append(panArgs, "-E") // a run that stops short of the end is live's to catch
	}
	do(t, dir, cc, ccArgs...)
	start := time.Now()
	out := do(t, dir, filepath.Join(dir, "pan"), panArgs...)
	r := result{took: time.Since(start)}
	m := errorsLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("pan said nothing about errors:\n%s", out)
	}
	r.errors, _ = strconv.Atoi(m[1])
	if m := statesLine.FindStringSubmatch(out); m != nil {
		r.states, _ = strconv.Atoi(m[1])
	}
	// pan stops at MEMLIM saying "reached -DMEMLIM bound" (not "out of memory") and then
	// "Search not completed", with errors: 0: a search cut short proves nothing.
	if strings.Contains(out, "out of memory") || strings.Contains(out, "reached -DMEMLIM bound") ||
		r.errors == 0 && strings.Contains(out, "Search not completed") {
		t.Errorf("the search was cut short (memory): it proves nothing\n%s", out)
	}
	if strings.Contains(out, "search depth too small") || strings.Contains(out, "max search depth too small") {
		t.Errorf("the search was cut short (depth): raise -m\n%s", out)
	}
	if r.errors > 0 {
		if m := whatLine.FindStringSubmatch(out); m != nil {
			r.what = m[1]
		}
		replay := do(t, dir, spin, append(append([]string{"-t"}, defs...), model)...)
		r.trail = trail(replay)
	}
	return r
}

// reserve is the memory (MB) left to everything else on the machine while the model runs.
const reserve = 3000

// memory is the bound (MB) of one search of the whole matrix: a big check runs alone and has
// the machine's memory but the reserve; the others run two at a time (make model's
// -parallel 2) and have half of it each.
func memory(t *testing.T, big bool) int {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatalf("the machine's memory: %v", err)
	}
	var kb int
	if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err != nil {
		t.Fatalf("the machine's memory, from /proc/meminfo: %v", err)
	}
	mb := kb/1024 - reserve
	if !big {
		mb /= 2
	}
	if mb < 1024 {
		t.Fatalf("%d MB for a search of the whole matrix: make model needs a machine of 8 GB at least", mb)
	}
	return mb
}

// hashBits is pan's -w for a search bounded to mb MB: a table of 2^w slots of 8 bytes, about
// a tenth of the bound (the states, about 32 bytes each compressed, take the rest; a slot holds
// a chain, so more states than slots cost only time).
func hashBits(mb int) int {
	w := 20
	for (8<<(w+1))/(1<<20) <= mb/10 {
		w++
	}
	return w
}

// trail keeps the model's own account of a replayed counterexample: its printf lines, the
// violated assertion, and where a cycle starts.
func trail(replay string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(replay))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "MSC: "), strings.Contains(line, "violated"), strings.Contains(line, "START OF CYCLE"):
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}

// shorten keeps the first and last n/2 lines of a trail.
func shorten(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n/2], "\n") + fmt.Sprintf("\n  ... %d lines ...\n", len(lines)-n) + strings.Join(lines[len(lines)-n/2:], "\n")
}

// do runs a command in dir and returns its output; a command that cannot run fails the test.
func do(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && (!exit || filepath.Base(name) != "pan") {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// tool finds a program the checks need, or fails saying how to install it.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed: `make test` installs it (apt-get install -y spin gcc, as root); see docs/recovery-model.md", name)
	}
	return p
}
