package onceflow_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The table of disagreements with the IAM simulator in docs/local-cloud.md, which the
// conformance test (infra/iam) reads to excuse a kind of case, cites for each row the AWS
// documentation that decides it and a test of the gatekeeper's side that exists in infra/iam or
// infra/gatekeeper: a disagreement is never excused without both.
func TestDocs_IAM_disagreements_cite_AWS_and_a_test_of_the_gatekeepers_side(t *testing.T) {
	b, err := os.ReadFile("docs/local-cloud.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	start := strings.Index(page, "\n### Where the simulator disagrees")
	if start < 0 {
		t.Fatal("docs/local-cloud.md has no section \"Where the simulator disagrees\"")
	}
	section := page[start+1:]
	if end := strings.Index(section[4:], "\n#"); end >= 0 {
		section = section[:end+4]
	}
	var tests strings.Builder
	for _, dir := range []string{"infra/iam", "infra/gatekeeper"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tests.Write(src)
		}
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\|(.*)\\|(.*)\\|(.*)\\|\\s*$")
	testName := regexp.MustCompile("`(Test[A-Za-z0-9_]+)`")
	rows := row.FindAllStringSubmatch(section, -1)
	for _, r := range rows {
		kind, docs, side := r[1], r[3], r[4]
		if !strings.Contains(docs, "](https://docs.aws.amazon.com/") {
			t.Errorf("row %q cites no AWS documentation page", kind)
		}
		names := testName.FindAllStringSubmatch(side, -1)
		if len(names) == 0 {
			t.Errorf("row %q names no test of the gatekeeper's side", kind)
		}
		for _, n := range names {
			if !strings.Contains(tests.String(), "func "+n[1]+"(t *testing.T)") {
				t.Errorf("row %q: %s is not a test of infra/iam or infra/gatekeeper", kind, n[1])
			}
		}
	}
	if strings.Count(section, "\n| `") != len(rows) {
		t.Errorf("%d rows in the table, %d of them read: each row is | `kind` | requests | documentation | test |", strings.Count(section, "\n| `"), len(rows))
	}
	t.Logf("%d rows", len(rows))
}
