package model_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// crashPoints are the consumer's crash points, CP(n) in consumer_fixed.pml.
func crashPoints(t *testing.T) []int {
	t.Helper()
	b, err := os.ReadFile("consumer_fixed.pml")
	if err != nil {
		t.Fatal(err)
	}
	var ps []int
	for _, m := range regexp.MustCompile(`\bCP\((\d+)\)`).FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[1])
		if !slices.Contains(ps, n) {
			ps = append(ps, n)
		}
	}
	sort.Ints(ps)
	if len(ps) == 0 {
		t.Fatal("no crash point CP(n) in consumer_fixed.pml")
	}
	return ps
}

// crashBudget is scenario s's CRASHES in scenarios.pml (0 unless its block defines it).
func crashBudget(t *testing.T, s int) int {
	t.Helper()
	b, err := os.ReadFile("scenarios.pml")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile(`(?m)^#(?:el)?if SCEN == (\d+)\n((?:[^#].*\n|#define.*\n)*)`).FindAllStringSubmatch(string(b), -1)
	for _, bl := range blocks {
		if bl[1] != strconv.Itoa(s) {
			continue
		}
		if m := regexp.MustCompile(`(?m)^#define CRASHES (\d+)`).FindStringSubmatch(bl[2]); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
		return 0
	}
	t.Fatalf("scenario %d is not in scenarios.pml", s)
	return 0
}

// A split scenario's parts hold every crash point once, and its budget is one crash: what
// makes its checks together the scenario's (split, model_test.go).
func TestModel_split_covers_every_crash_point(t *testing.T) {
	all := crashPoints(t)
	if all[len(all)-1] > 15 {
		t.Fatalf("crash point %d: CRASHAT's default (receive.pml) lets points 1 to 15 crash", all[len(all)-1])
	}
	for s, parts := range split {
		if b := crashBudget(t, s); b != 1 {
			t.Errorf("scenario %d: a budget of %d crashes; a split by crash point needs one (a run with two crashes is in no part)", s, b)
		}
		var got []int
		for _, ps := range parts {
			for _, p := range ps {
				if slices.Contains(got, p) {
					t.Errorf("scenario %d: crash point %d is in two parts", s, p)
				}
				got = append(got, p)
			}
		}
		sort.Ints(got)
		if !slices.Equal(got, all) {
			t.Errorf("scenario %d: the parts hold crash points %v; the consumer has %v", s, got, all)
		}
	}
}

// breakOnlyPoint is the crash point of a call made only by a step broken deliberately (BREAK=1's
// write after its read, consumer_fixed.pml's C_HOLDW).
const breakOnlyPoint = 7

// agreeing are the scenarios the split is checked against the whole on: small enough to search
// whole, one crash each, reaching between them every crash point but breakOnlyPoint. make test
// checks the first (which reaches points 3, 4, 6 and 9 to 12); make model all of them.
var agreeing = []int{6, 10, 14}

// TestModel_split_agrees_with_the_whole checks a split by crash point against the whole search
// of a scenario small enough for it: with the crash point kept in the state (CRASHGHOST), the
// whole's verdict is every part's, and its states are the crash-free search's plus what each
// part of one point stores beyond it, for safety and liveness: a split loses no run and counts
// none twice.
func TestModel_split_agrees_with_the_whole(t *testing.T) {
	if testing.Short() {
		t.Skip(needsSPIN)
	}
	spin, cc := tool(t, "spin"), tool(t, "gcc")
	src, err := filepath.Glob("*.pml")
	if err != nil || len(src) == 0 {
		t.Fatalf("no model files (*.pml) beside the test: %v", err)
	}
	scens := agreeing[:1]
	if os.Getenv("MODEL") == "all" {
		scens = agreeing
	}
	m := newMatrix(false)
	t.Cleanup(func() { m.print(os.Stdout) })
	points := crashPoints(t)
	reached := map[int]bool{}
	for _, s := range scens {
		for _, live := range []bool{false, true} {
			whole := check{scen: s, live: live, defines: []string{"CRASHGHOST"}}
			none := check{scen: s, live: live, defines: []string{"CRASHGHOST"}, points: []int{}}
			cs := []check{whole, none}
			for _, p := range points {
				cs = append(cs, check{scen: s, live: live, defines: []string{"CRASHGHOST"}, points: []int{p}})
			}
			var mu sync.Mutex
			got := map[string]result{}
			name := whole.name()
			t.Run(name, func(t *testing.T) {
				for _, c := range cs {
					t.Run(strings.TrimPrefix(c.name(), name+"/"), func(t *testing.T) {
						t.Parallel()
						r := run(t, spin, cc, src, c, m)
						m.add(c, r)
						judge(t, c, r)
						mu.Lock()
						got[c.name()] = r
						mu.Unlock()
					})
				}
			})
			if len(got) != len(cs) {
				continue // a search failed to run: said above
			}
			w, n := got[whole.name()], got[none.name()]
			sum, failed := n.states, n.errors > 0
			for _, c := range cs[2:] {
				r := got[c.name()]
				sum += r.states - n.states
				failed = failed || r.errors > 0
				if r.states > n.states {
					reached[c.points[0]] = true
				}
			}
			if failed != (w.errors > 0) {
				t.Errorf("%s: the whole %s; a part fails: %v (the whole fails when, and only when, a part does)", name, w.verdict(), failed)
			}
			if sum != w.states {
				t.Errorf("%s: the whole stored %s states; the crash-free search %s plus each crash point's beyond it %s",
					name, thousands(w.states), thousands(n.states), thousands(sum))
			}
			t.Logf("%s: %s states whole = %s crash-free + %s beyond it at %d crash points", name,
				thousands(w.states), thousands(n.states), thousands(sum-n.states), len(points))
		}
	}
	// The agreement says something of a point only where a crash there is reached: every point
	// but BREAK=1's (C_HOLDW, a call only the broken step makes) is, in one of the scenarios.
	if len(scens) == len(agreeing) {
		for _, p := range points {
			if !reached[p] && p != breakOnlyPoint {
				t.Errorf("crash point %d is reached in none of scenarios %v: their agreement says nothing of it", p, agreeing)
			}
		}
	}
}
