package onceflow_test

import (
	"os"
	"regexp"
	"testing"
)

// docs/runbook.md names a test as the proof of each path: at least one per incident kind, and
// each one exists (TestDocs_cite_only_what_exists checks every page's names the same way).
func TestRunbook_names_only_tests_that_exist(t *testing.T) {
	page, err := os.ReadFile("docs/runbook.md")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(Test[A-Za-z0-9_]+)(/[^`]*)?`").FindAllStringSubmatch(string(page), -1)
	if len(named) < 5 {
		t.Fatalf("docs/runbook.md names %d tests; want one per incident kind at least", len(named))
	}
	r := readRepo(t)
	for _, m := range named {
		if !r.hasFunc(m[1], false) {
			t.Errorf("docs/runbook.md names %s, which no test file defines", m[1])
		}
	}
}
