package onceflow_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/producers.md's table of event changes is the test that runs them: each row is a case of
// pkg/testkit's eventChanges and each case a row, and the row says the outcome the case asserts
// (its last message's: applied, duplicate, ignored, conflict, malformed) and whether the group
// is then held (malformed and conflict hold it under HoldGroup) or goes on.
func TestDocs_producers_md_lists_every_event_change(t *testing.T) {
	page, err := os.ReadFile("docs/producers.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("pkg/testkit/evolution_test.go")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{} // change -> the outcome of its last message
	for _, m := range eventChange.FindAllStringSubmatch(string(src), -1) {
		wants := strings.Split(m[2], ",")
		cases[m[1]] = strings.Fields(strings.Trim(wants[len(wants)-1], ` "`))[0]
	}
	if len(cases) < 10 {
		t.Fatalf("found %d cases in pkg/testkit/evolution_test.go; its table's shape changed", len(cases))
	}
	rows := changeRows(string(page))
	for change, outcome := range cases {
		row, ok := rows[change]
		if !ok {
			t.Errorf("%q is a case of the test but no row of docs/producers.md's table", change)
			continue
		}
		if got := strings.Trim(strings.Fields(row[2])[0], ";:,"); got != outcome {
			t.Errorf("%q: the page says %q, the test asserts %s", change, row[2], outcome)
		}
		group := "goes on"
		if outcome == "malformed" || outcome == "conflict" {
			group = "held"
		}
		if row[3] != group {
			t.Errorf("%q: the page says its group %s; the test asserts it %s", change, row[3], group)
		}
	}
	for change := range rows {
		if _, ok := cases[change]; !ok {
			t.Errorf("%q is a row of docs/producers.md's table but no case of the test", change)
		}
	}
}

// eventChange is a case of pkg/testkit's eventChanges: its change and its wants.
var eventChange = regexp.MustCompile(`(?s)\{change: "([^"]+)".*?want: \[\]string\{([^}]*)\}\}`)

// changeRows returns the rows of the table under "## Changing an event", by their first cell.
func changeRows(page string) map[string][]string {
	_, section, _ := strings.Cut(page, "\n## Changing an event\n")
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| change |") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) == 4 && !slices.Contains(cells, "") {
			rows[cells[0]] = cells
		}
	}
	return rows
}
