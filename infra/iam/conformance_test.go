package iam_test

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/iam"
)

// disagreementTable is where the disagreements with the simulator that AWS's documentation
// decides for the gatekeeper are listed, each with the page and a test of the gatekeeper's side.
const disagreementTable = "../../docs/local-cloud.md"

// knownDisagreements reads the kinds of cases the table lists (its first column, in backticks).
func knownDisagreements(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(disagreementTable)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	start := strings.Index(page, "\n### Where the simulator disagrees")
	if start < 0 {
		t.Fatalf("%s has no section \"Where the simulator disagrees\"", disagreementTable)
	}
	page = page[start+1:]
	if end := strings.Index(page[4:], "\n#"); end >= 0 {
		page = page[:end+4]
	}
	var kinds []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(page, -1) {
		kinds = append(kinds, m[1])
	}
	return kinds
}

// suiteCases is the corpus: the templates' policies and their mutations, and the generated
// cases over operators, set qualifiers, IfExists, Null, NotAction, NotResource, explicit Deny
// and ARN wildcards.
func suiteCases(t *testing.T) []simCase {
	return slices.Concat(templateCases(t), operatorCases(t), elementCases(t))
}

// The gatekeeper's evaluator decides every request of the corpus as the independent simulator
// (@cloud-copilot/iam-simulate, which follows AWS's documented evaluation logic) does, but for
// the kinds of cases docs/local-cloud.md lists with the AWS documentation that decides them;
// and an evaluator with an operator swapped is caught.
func TestEvaluate_decides_as_the_independent_IAM_simulator(t *testing.T) {
	began := time.Now()
	cases := suiteCases(t)
	ds := simulate(t, cases)
	known := knownDisagreements(t)
	kinds := map[string]int{}
	for _, c := range cases {
		kinds[c.Kind]++
	}
	t.Logf("%d cases decided by both evaluators in %s: %s", len(cases), time.Since(began).Round(100*time.Millisecond), countsLine(kinds))
	for i, d := range ds {
		switch {
		case d.Error != "":
			t.Errorf("the simulator cannot decide %s: %s", cases[i], d.Error)
		case len(d.Ignored) > 0:
			t.Errorf("%s: the request has condition keys %v its action has not", cases[i], d.Ignored)
		}
	}
	t.Run("as written", func(t *testing.T) {
		byKind := disagreements(cases, ds)
		for _, kind := range slices.Sorted(maps.Keys(byKind)) {
			if !slices.Contains(known, kind) {
				report(t, kind, byKind[kind])
			}
		}
		for _, kind := range known {
			if len(byKind[kind]) == 0 {
				t.Errorf("%s lists %q, but no case of it disagrees: remove its row", disagreementTable, kind)
			}
		}
		n := 0
		for _, kind := range known {
			n += len(byKind[kind])
		}
		t.Logf("%d disagreements, each of a kind %s explains (%v)", n, disagreementTable, known)
	})
	t.Run("with StringLike evaluated as StringNotLike", func(t *testing.T) {
		defer iam.SwapOperators("stringlike", "stringnotlike")()
		byKind := disagreements(cases, ds)
		n := 0
		for kind, dis := range byKind {
			if !slices.Contains(known, kind) {
				n += len(dis)
			}
		}
		if n == 0 {
			t.Fatal("the suite found no disagreement with StringLike evaluated as StringNotLike")
		}
		t.Logf("%d disagreements the table does not explain, %d of the template's requests", n, len(byKind["template"]))
	})
	t.Run("with ArnEquals comparing exactly", func(t *testing.T) {
		defer iam.SwapOperators("arnequals", "stringequals")()
		if n := len(disagreements(cases, ds)["ARN wildcards"]); n == 0 {
			t.Fatal("the suite found no disagreement with ArnEquals comparing exactly, as StringEquals does")
		}
	})
}

// disagreements are the cases the evaluators decide differently, by kind.
func disagreements(cases []simCase, ds []decision) map[string][]string {
	out := map[string][]string{}
	for i, c := range cases {
		if ds[i].Error != "" {
			continue
		}
		if got := c.evaluate(); got != ds[i].Result {
			out[c.Kind] = append(out[c.Kind], fmt.Sprintf("%s: the gatekeeper %s, the simulator %s", c, got, ds[i].Result))
		}
	}
	return out
}

// report fails t with a kind's disagreements, the first few in full.
func report(t *testing.T, kind string, dis []string) {
	t.Helper()
	const shown = 5
	t.Errorf("%d cases of kind %q decided otherwise than the simulator decides them (list the kind in %s, with the AWS documentation that decides it and a test of the gatekeeper's side, only if AWS documents the gatekeeper's answer):\n  %s",
		len(dis), kind, disagreementTable, strings.Join(dis[:min(shown, len(dis))], "\n  "))
}

func countsLine(kinds map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	return strings.Join(parts, ", ")
}
