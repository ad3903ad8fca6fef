package onceflow_test

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README and docs/ cite only what exists: every make target is the Makefile's, every file
// path is the repository's, every test, benchmark or example is defined by a test file, every
// `onceflow <command> <subcommand>` is one cmd/onceflow runs, and every relative link names an
// existing file and, with #anchor, one of its headings. So the docs cannot drift from the code.
func TestDocs_cite_only_what_exists(t *testing.T) {
	r := readRepo(t)
	checked := map[string]int{}
	for _, name := range docPages(t) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		for _, problem := range r.problems(name, page, checked) {
			t.Errorf("%s: %s", name, problem)
		}
	}
	t.Logf("checked %v", checked)
	for _, kind := range []string{"make target", "path", "test", "command", "link"} {
		if checked[kind] == 0 {
			t.Errorf("found no %s to check: the docs test no longer sees them", kind)
		}
	}
}

var (
	makeCommand = regexp.MustCompile(`(?m)(?:^|[\s$(])make +([a-zA-Z][\w-]*<?)`)
	testName    = regexp.MustCompile(`(?:^|[^\w:])((?:Test|Benchmark|Example|Fuzz)[A-Z][A-Za-z0-9_]*\*?)`)
	cliUse      = regexp.MustCompile(`(?m)(?:^|[\s/])onceflow +([a-z]+) +([a-z|]+)\b`)
	pathLike    = regexp.MustCompile(`^[\w.*-]+(?:/[\w.*-]*)+$`)
	fileLike    = regexp.MustCompile(`^[\w-]+\.(?:go|md|yaml|toml|json|java|cjs|mjs|sh)$`)
	mdLink      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// problems returns what page (the file name) cites that does not exist, counting what it
// checked by kind.
func (r repo) problems(name, page string, checked map[string]int) []string {
	var out []string
	for _, code := range codeOf(page) {
		for _, m := range makeCommand.FindAllStringSubmatch(code, -1) {
			checked["make target"]++
			if !r.hasTarget(m[1]) {
				out = append(out, "`make "+m[1]+"`: no such target in the Makefile")
			}
		}
		for _, m := range testName.FindAllStringSubmatch(code, -1) {
			if strings.Contains(code, "func "+m[1]+"(") {
				continue // defined by the page's own example code
			}
			checked["test"]++
			if !r.hasFunc(m[1], strings.Contains(code, "-run")) {
				out = append(out, m[1]+": no test file defines it")
			}
		}
		for _, m := range cliUse.FindAllStringSubmatch(code, -1) {
			for _, sub := range strings.Split(m[2], "|") {
				checked["command"]++
				if !r.commands[m[1]+" "+sub] {
					out = append(out, "`onceflow "+m[1]+" "+sub+"`: cmd/onceflow has no such command")
				}
			}
		}
		if p, ok := r.citedPath(code); ok {
			checked["path"]++
			if !r.hasPath(p) && (!fileLike.MatchString(p) || !r.hasBase(p)) {
				out = append(out, "`"+p+"`: no such file in the repository")
			}
		}
	}
	for _, m := range mdLink.FindAllStringSubmatch(withoutFences(page), -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		checked["link"]++
		if problem := linkProblem(name, page, target); problem != "" {
			out = append(out, "link "+target+": "+problem)
		}
	}
	return out
}

// citedPath returns the path an inline code span cites, if it is one: a slash-separated path
// under a top-level entry of the repository, or a file name with a source extension.
// Generated files (.local/), placeholders (<fn>) and absolute paths are not citations.
func (r repo) citedPath(code string) (string, bool) {
	if strings.ContainsAny(code, " \n<>{}$:=@,") || strings.HasPrefix(code, ".local") {
		return "", false
	}
	if pathLike.MatchString(code) {
		first, _, _ := strings.Cut(code, "/")
		return code, r.files[first]
	}
	return code, fileLike.MatchString(code)
}

// linkProblem says what is wrong with a relative link of page (its file name), or "".
func linkProblem(name, page, target string) string {
	file, anchor, _ := strings.Cut(target, "#")
	text := page
	if file != "" {
		file = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(name), file)))
		b, err := os.ReadFile(file)
		if err != nil {
			if info, serr := os.Stat(file); serr == nil && info.IsDir() && anchor == "" {
				return ""
			}
			return "no such file " + file
		}
		text = string(b)
	}
	if anchor != "" && !anchors(text)[anchor] {
		return "no heading #" + anchor + " in " + cmp.Or(file, name)
	}
	return ""
}

// withoutFences returns page without its fenced code blocks.
func withoutFences(page string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// The README's table of make targets names every target the Makefile declares .PHONY (a
// placeholder such as build-<LogicalId> stands for the targets with its prefix).
func TestDocs_README_names_every_make_target(t *testing.T) {
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range makeCommand.FindAllStringSubmatch(strings.Join(codeOf(string(readme)), "\n"), -1) {
		named[m[1]] = true
	}
	var phony []string
	for _, line := range strings.Split(string(makefile), "\n") {
		if rest, ok := strings.CutPrefix(line, ".PHONY:"); ok {
			phony = append(phony, strings.Fields(strings.TrimSuffix(rest, "\\"))...)
		}
	}
	if len(phony) < 10 {
		t.Fatalf("read %d .PHONY targets from the Makefile: its shape changed", len(phony))
	}
	for _, target := range phony {
		if strings.HasPrefix(target, "$(") || named[target] {
			continue
		}
		if prefix, _, ok := strings.Cut(target, "-"); ok && named[prefix+"-<"] {
			continue
		}
		t.Errorf("the README does not name `make %s`", target)
	}
}
