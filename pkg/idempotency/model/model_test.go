package model_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// check is one run of the model checker over the recovery protocol's model (recovery.pml): a
// scenario, for safety (assertions) or liveness (the LTL property live), with more -D flags
// (a step broken deliberately, a crash point mask), and whether it must find a counterexample.
type check struct {
	scen    int
	defines []string // more -D flags: BREAK=n, NOCANON, ...
	points  []int    // the crash points a part of a split scenario lets crash (CRASHAT); nil: all
	live    bool
	fails   bool // the check must find a counterexample
	why     string
}

func (c check) name() string {
	kind := "safety"
	if c.live {
		kind = "live"
	}
	n := fmt.Sprintf("scen%d/%s", c.scen, kind)
	for _, d := range c.defines {
		n += "/" + strings.ReplaceAll(d, "=", "")
	}
	switch {
	case c.points == nil:
	case len(c.points) == 0:
		n += "/nocrash"
	default:
		n += "/at" + pointList(c.points)
	}
	return n
}

// pointList writes crash points as 1,2,3.
func pointList(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

// crashMask is CRASHAT for a set of crash points: bit n for point n.
func crashMask(ps []int) int {
	m := 0
	for _, p := range ps {
		m |= 1 << p
	}
	return m
}

// ids is the model's bound on message ids in use at once (env.pml's MMAX): a send takes the
// smallest id nothing refers to any more, so a run that redrives without end repeats its states
// instead of running out. Running out is an assertion of its own ("a model bound"), never a
// cycle: a check that meets it fails, saying so.
const ids = "MMAX=16"

// scenarios are scenarios.pml's, every one checked for safety and liveness by make model.
var scenarios = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}

// wideScenarios are those whose checks take minutes (hundreds of thousands of states to
// millions): make model runs them, make test does not.
var wideScenarios = []int{9, 10, 11, 12, 13, 14, 15, 17, 19}

func wide(s int) bool { return slices.Contains(wideScenarios, s) }

// open are the gaps the model found that are not closed yet: the scenario whose liveness fails,
// and why. Its check must find the counterexample, so that it stays in view (the matrix prints
// it) until the gap is closed; then the check fails, saying so, and the scenario's liveness
// joins the checks that must pass. None is open now.
var open = map[int]string{}

// split is how make model checks a scenario too wide to search whole within its memory bound:
// as one check per set of crash points (the points CRASHAT lets crash), safety and liveness
// alike. A split scenario's budget is one crash, so each of its runs crashes at one point or
// none and is a run of the check whose set has that point (a run without a crash is a run of
// every check): checks whose sets together hold every crash point check every run the
// scenario has, and a counterexample of the whole is one of a part. The sets are chosen by
// size, each part's liveness search within budget()'s bound (docs/recovery-model.md,
// "Measured"). TestModel_split_covers_every_crash_point holds
// them to that; TestModel_split_agrees_with_the_whole checks, on a scenario small enough to
// search whole, that the parts' verdicts are the whole's and their states add up to its.
var split = map[int][][]int{
	13: {{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10}, {11}, {12}},
	15: {{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11}, {12}},
}

// broken are the steps broken deliberately (recovery.pml's BREAK=n), each with the scenario and
// the check it must fail, so the checks are proven able to fail.
var broken = []struct {
	brk, scen int
	live      bool
}{{1, 5, true}, {2, 4, false}, {3, 6, false}, {4, 1, true}, {5, 7, true}, {6, 17, true}, {7, 18, true}, {8, 20, true}, {8, 21, true}, {9, 20, true}, {9, 21, true}}

// whole is scenario s's safety and liveness checks, searched whole; the liveness of an open gap
// must find its counterexample.
func whole(s int) []check {
	return []check{{scen: s}, {scen: s, live: true, fails: open[s] != "", why: open[s]}}
}

// quick is the set make test runs: safety and liveness of every scenario but the wide ones,
// and each broken step, which must fail.
func quick() []check {
	var cs []check
	for _, s := range scenarios {
		if !wide(s) {
			cs = append(cs, whole(s)...)
		}
	}
	for _, b := range broken {
		cs = append(cs, check{scen: b.scen, live: b.live, fails: true,
			defines: []string{"BREAK=" + strconv.Itoa(b.brk)}, why: "a step broken deliberately"})
	}
	return cs
}

// all is the whole matrix make model runs: safety and liveness of every scenario, the broken
// steps, and, on every scenario small enough, the same checks without the renaming of message
// ids (NOCANON, ids.pml): the unreduced search must reach the same verdicts, and each broken
// step must fail it too.
func all() []check {
	cs := quick()
	for _, s := range scenarios {
		if !wide(s) {
			continue
		}
		parts, ok := split[s]
		if !ok {
			cs = append(cs, whole(s)...)
			continue
		}
		for _, ps := range parts {
			cs = append(cs, check{scen: s, points: ps}, check{scen: s, points: ps, live: true})
		}
	}
	return append(cs, unreduced(quick())...)
}

// unreduced is checks run again without the renaming of message ids.
func unreduced(cs []check) []check {
	out := make([]check, 0, len(cs))
	for _, c := range cs {
		c.defines = append([]string{"NOCANON"}, c.defines...)
		out = append(out, c)
	}
	return out
}

// needsSPIN is why a check skips under -short.
const needsSPIN = "the model's checks take minutes and need SPIN and a C compiler: `make test` installs them and runs the fast set, `make model` the whole matrix"

// TestModel_recovery_protocol runs the model checker (SPIN) over the recovery protocol's model:
// the set make test runs, or with MODEL=all (make model) the whole matrix. A check that must
// pass and finds a counterexample fails with its trail; one that must fail and does not fails
// too; a search cut short (memory, depth) proves nothing and fails. At its end it prints the
// matrix: each check's states, time, memory and verdict. Under -short it skips.
func TestModel_recovery_protocol(t *testing.T) {
	if testing.Short() {
		t.Skip(needsSPIN)
	}
	spin, cc := tool(t, "spin"), tool(t, "gcc")
	whole := os.Getenv("MODEL") == "all"
	cs := quick()
	if whole {
		cs = all()
	}
	src, err := filepath.Glob("*.pml")
	if err != nil || len(src) == 0 {
		t.Fatalf("no model files (*.pml) beside the test: %v", err)
	}
	m := newMatrix(whole)
	t.Cleanup(func() { m.print(os.Stdout) })
	for _, c := range cs {
		t.Run(c.name(), func(t *testing.T) {
			t.Parallel()
			r := run(t, spin, cc, src, c, m)
			m.add(c, r)
			t.Logf("%s: %s states stored, %s, %d MB, %s", c.name(), thousands(r.states), r.took.Round(10*time.Millisecond), r.mb, r.verdict())
			judge(t, c, r)
		})
	}
}

// judge fails a check whose verdict is not the one it must have.
func judge(t *testing.T, c check, r result) {
	t.Helper()
	switch {
	case r.errors > 0 && !c.fails && boundLine.MatchString(r.what):
		t.Errorf("the search reached a model bound (%s): it proves nothing beyond it; the run there:\n%s", r.what, r.trail)
	case r.errors > 0 && !c.fails:
		t.Errorf("counterexample (%s):\n%s", r.what, r.trail)
	case r.errors == 0 && c.fails:
		t.Errorf("no counterexample, but it must have one (%s): a check that cannot fail, or a gap closed (then take it off open)", c.why)
	case c.fails && !strings.Contains(r.trail, "MSC:"):
		t.Errorf("counterexample without a trail that replays:\n%s", r.trail)
	case c.fails:
		t.Logf("counterexample, as it must (%s): %s\n%s", c.why, r.what, shorten(r.trail, 40))
	}
}

// result is what one check found.
type result struct {
	errors int
	states int
	took   time.Duration
	mb     int    // the search's peak memory (resident), MB
	cut    string // why the search was cut short (memory, depth), if it was: it proves nothing
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
	statesLine = regexp.MustCompile(`([0-9.e+]+) states, stored`) // 1.30158e+08 from 100 million on
	whatLine   = regexp.MustCompile(`pan:\d+: (.*)`)
	// boundLine is a violated assertion that is one of the model's bounds (env.pml's MMAX and
	// DMAX, recovery.pml's HCAP), not a property: the search stopped there, proving nothing
	// beyond it.
	boundLine = regexp.MustCompile(`^assertion violated \((nid|dn|h\[[a-z_]+\]\.n)<\d+\)`)
)

// panStates is the count of states pan stored, 0 if it says none.
func panStates(out string) int {
	sm := statesLine.FindStringSubmatch(out)
	if sm == nil {
		return 0
	}
	n, err := strconv.ParseFloat(sm[1], 64)
	if err != nil {
		return 0
	}
	return int(n)
}

// run compiles and runs one check in a directory of its own, and replays its trail if it found
// a counterexample.
func run(t *testing.T, spin, cc string, src []string, c check, m *matrix) result {
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
	if c.points != nil {
		defs = append(defs, "-DCRASHAT="+strconv.Itoa(crashMask(c.points)))
	}
	do(t, dir, spin, append(append([]string{"-a"}, defs...), "recovery.pml")...)
	// The set make test runs is compiled without optimisation: its searches are short, and a
	// model's pan.c compiles in a second that way, against ten at -O2. The whole matrix is
	// compiled at -O2, its states stored compressed (COLLAPSE, exact), each search bounded in
	// memory (a search that runs out says so and fails), its hash table sized once
	// (NO_RESIZE, -w): pan's own resizing allocates a table four times the size beside the
	// old one.
	ccArgs := []string{"-O0", "-o", "pan", "pan.c"}
	panArgs := []string{"-m1000000"}
	if m.whole {
		mb := m.memory
		ccArgs = []string{"-O2", "-DCOLLAPSE", "-DNO_RESIZE", "-DMEMLIM=" + strconv.Itoa(mb), "-o", "pan", "pan.c"}
		panArgs = append(panArgs, "-w"+strconv.Itoa(hashBits(mb)))
	}
	if c.live {
		panArgs = append(panArgs, "-a")
	} else {
		ccArgs = append([]string{"-DSAFETY", "-DNOCLAIM"}, ccArgs...)
		panArgs = append(panArgs, "-E") // a run that stops short of the end is live's to catch
	}
	do(t, dir, cc, ccArgs...)
	out, r := search(t, dir, panArgs, m)
	em := errorsLine.FindStringSubmatch(out)
	if em == nil {
		t.Fatalf("pan said nothing about errors:\n%s", out)
	}
	r.errors, _ = strconv.Atoi(em[1])
	r.states = panStates(out)
	// pan stops at MEMLIM saying "reached -DMEMLIM bound" (not "out of memory") and then
	// "Search not completed", with errors: 0: a search cut short proves nothing.
	if strings.Contains(out, "out of memory") || strings.Contains(out, "reached -DMEMLIM bound") ||
		r.errors == 0 && strings.Contains(out, "Search not completed") {
		r.cut = "memory"
		t.Errorf("the search was cut short (memory): it proves nothing\n%s", out)
	}
	if strings.Contains(out, "search depth too small") {
		r.cut = "depth"
		t.Errorf("the search was cut short (depth): raise -m\n%s", out)
	}
	if r.errors > 0 {
		if wm := whatLine.FindStringSubmatch(out); wm != nil {
			r.what = wm[1]
		}
		r.trail = trail(replay(t, dir, spin, append(append([]string{"-t"}, defs...), "recovery.pml")...))
	}
	return r
}

// search runs pan, one search at a time per slot of the matrix, and measures its time and
// peak memory.
func search(t *testing.T, dir string, args []string, m *matrix) (string, result) {
	t.Helper()
	m.slots <- struct{}{}
	defer func() { <-m.slots }()
	cmd := exec.Command(filepath.Join(dir, "pan"), args...)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r := result{took: time.Since(start)}
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("pan %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.mb = int(ru.Maxrss / 1024)
	}
	return string(out), r
}

// matrix is the checks of one run and what each found, printed at the end; its slots bound the
// searches running at once (go test's -parallel bounds the checks, compiling included).
type matrix struct {
	whole  bool
	memory int // the bound of one search, MB (whole matrix only)
	slots  chan struct{}
	start  time.Time
	mu     sync.Mutex
	rows   []row
}

type row struct {
	name    string
	states  int
	took    time.Duration
	mb      int
	verdict string
}

// searchesAtOnce is how many searches run at once: two, one per core of this 2-core machine
// (make test's set takes a few hundred MB each; the whole matrix's each get budget()'s share).
const searchesAtOnce = 2

func newMatrix(whole bool) *matrix {
	m := &matrix{whole: whole, start: time.Now(), slots: make(chan struct{}, searchesAtOnce)}
	if whole {
		m.memory = budget()
	}
	return m
}

func (m *matrix) add(c check, r result) {
	v := "passes"
	switch {
	case r.cut != "" && r.errors == 0:
		v = "CUT SHORT (" + r.cut + "): proves nothing"
	case r.errors > 0 && c.fails:
		v = "counterexample, as it must: " + r.what
	case r.errors > 0 && boundLine.MatchString(r.what):
		v = "MODEL BOUND REACHED: " + r.what
	case r.errors > 0:
		v = "COUNTEREXAMPLE: " + r.what
	case c.fails:
		v = "NO COUNTEREXAMPLE (must have one)"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows = append(m.rows, row{name: c.name(), states: r.states, took: r.took, mb: r.mb, verdict: v})
}

// print writes the matrix: each check's states stored, search time, peak memory and verdict.
func (m *matrix) print(w *os.File) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sort.Slice(m.rows, func(i, j int) bool { return less(m.rows[i].name, m.rows[j].name) })
	var total time.Duration
	fmt.Fprintf(w, "\nthe model's matrix: %d checks, %d searches at once", len(m.rows), searchesAtOnce)
	if m.whole {
		fmt.Fprintf(w, ", each bounded to %d MB", m.memory)
	}
	fmt.Fprintf(w, "\n%-34s %15s %10s %8s  %s\n", "check", "states stored", "time", "memory", "verdict")
	for _, r := range m.rows {
		total += r.took
		fmt.Fprintf(w, "%-34s %15s %10s %5d MB  %s\n", r.name, thousands(r.states), r.took.Round(10*time.Millisecond), r.mb, r.verdict)
	}
	fmt.Fprintf(w, "searches %s in all; the matrix %s of wall time, compiling included\n\n",
		total.Round(time.Second), time.Since(m.start).Round(time.Second))
}

// less orders check names by scenario number, then by name.
func less(a, b string) bool {
	na, nb := scenNumber(a), scenNumber(b)
	if na != nb {
		return na < nb
	}
	return a < b
}

func scenNumber(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(name, "/", 2)[0], "scen"))
	return n
}

// thousands writes n with commas.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// wideMemory is the most memory (MB) one search of the whole matrix may use: 9 GB, which two
// searches at once leave 6 GB of this 24 GB machine to everything else; less on a smaller one.
const wideMemory = 9000

// reserve is the memory (MB) left to everything else on the machine while the model runs.
const reserve = 6000

// budget is the memory (MB) one search of the whole matrix may use: its share of what the
// machine has beyond the reserve.
func budget() int {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 8000
	}
	var kb int
	if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err != nil {
		return 8000
	}
	return min(wideMemory, (kb/1024-reserve)/searchesAtOnce)
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
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// replay runs spin -t in dir and returns its output. spin runs on past a violated assertion
// until the trail ends, and exits 1 when a statement after it cannot run (an index past a
// bound the assertion guarded): its account up to the violation is the trail, so only a spin
// that did not run fails the test.
func replay(t *testing.T, dir, spin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(spin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		t.Fatalf("%s %s: %v\n%s", spin, strings.Join(args, " "), err, out)
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
