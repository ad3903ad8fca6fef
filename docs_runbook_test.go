package onceflow_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every test docs/runbook.md names as the proof of a path exists, so the page cannot point at
// a test that was renamed or removed.
func TestRunbook_names_only_tests_that_exist(t *testing.T) {
	page, err := os.ReadFile("docs/runbook.md")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(Test[A-Za-z0-9_]+)(/[^`]*)?`").FindAllStringSubmatch(string(page), -1)
	if len(named) < 5 {
		t.Fatalf("docs/runbook.md names %d tests; want one per incident kind at least", len(named))
	}
	var sources strings.Builder
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sources.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range named {
		if !strings.Contains(sources.String(), "func "+m[1]+"(") {
			t.Errorf("docs/runbook.md names %s, which no test file defines", m[1])
		}
	}
}
