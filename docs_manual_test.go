package onceflow_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// manualLink is a relative link to a page of docs/ from docs/README.md.
var manualLink = regexp.MustCompile(`\]\(([a-z0-9-]+\.md)(?:#[^)]*)?\)`)

// The manual is one: every page of docs/ is on a reading path of docs/README.md, the
// repository's README points to it, and no page is a stub (a subject of a few lines belongs
// on the page of its larger subject).
func TestDocs_every_page_is_on_a_reading_path_of_the_manual(t *testing.T) {
	b, err := os.ReadFile("docs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, m := range manualLink.FindAllStringSubmatch(string(b), -1) {
		linked[m[1]] = true
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		name := filepath.Base(p)
		if name == "README.md" {
			continue
		}
		if !linked[name] {
			t.Errorf("%s is on no reading path of docs/README.md", p)
		}
		page, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(page), "\n"); lines < 50 {
			t.Errorf("%s has %d lines: a stub; merge it into the page of its subject", p, lines)
		}
	}
	if len(linked) == 0 {
		t.Error("docs/README.md links no page")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/README.md)") {
		t.Error("README.md does not link the manual, docs/README.md")
	}
}
