package onceflow_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docPages are the pages the docs test reads: the README and every page under docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, pages...)
}

// codeOf returns the code of a Markdown page: its inline code spans, fenced blocks and
// indented blocks, one string each. References are looked for there only, so that prose
// ("make the effect happen") is never taken for a command.
func codeOf(page string) []string {
	var code []string
	var block []string
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "```"):
			if fenced {
				code = append(code, strings.Join(block, "\n"))
				block = nil
			}
			fenced = !fenced
		case fenced:
			block = append(block, line)
		case strings.HasPrefix(line, "    ") && !strings.HasPrefix(strings.TrimSpace(line), "- "):
			code = append(code, line)
		default:
			for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
				code = append(code, m[1])
			}
		}
	}
	return code
}

var inlineCode = regexp.MustCompile("`([^`]+)`")

// slug is GitHub's anchor of a heading: lower case, punctuation dropped but hyphens and
// underscores, spaces made hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a Markdown page's headings, with GitHub's -1, -2 suffixes
// for repeated ones.
func anchors(page string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		s := slug(strings.TrimSpace(strings.TrimLeft(line, "#")))
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// repo is what the docs may cite: the Makefile's targets, the Go tests, benchmarks and
// examples, the operator CLI's subcommands and the repository's files.
type repo struct {
	targets  []string
	funcs    string // every "func Name(" of every _test.go file
	commands map[string]bool
	files    map[string]bool // every file and directory, slash-separated, relative to the root
}

func readRepo(t *testing.T) repo {
	t.Helper()
	r := repo{commands: map[string]bool{}, files: map[string]bool{}}
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range makeTarget.FindAllStringSubmatch(string(makefile), -1) {
		r.targets = append(r.targets, strings.Fields(m[1])...)
	}
	main, err := os.ReadFile("cmd/onceflow/main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range cliCommand.FindAllStringSubmatch(string(main), -1) {
		r.commands[m[1]] = true
	}
	if len(r.targets) < 10 || len(r.commands) < 5 {
		t.Fatalf("read %d make targets and %d CLI commands: the Makefile's or cmd/onceflow's shape changed", len(r.targets), len(r.commands))
	}
	var funcs strings.Builder
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		r.files[filepath.ToSlash(path)] = true
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			funcs.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r.funcs = funcs.String()
	return r
}

var (
	makeTarget = regexp.MustCompile(`(?m)^([A-Za-z0-9_.%-]+(?: [A-Za-z0-9_.%-]+)*):(?:[^=]|$)`)
	cliCommand = regexp.MustCompile(`"([a-z]+ [a-z]+)": [a-zA-Z]+\(\)`)
)

// hasTarget reports whether the Makefile has target, where a placeholder (build-<LogicalId>)
// stands for any target with its prefix.
func (r repo) hasTarget(target string) bool {
	prefix, placeholder := strings.CutSuffix(target, "<")
	for _, t := range r.targets {
		if t == target || placeholder && strings.HasPrefix(t, prefix) && len(t) > len(prefix) {
			return true
		}
	}
	return false
}

// hasFunc reports whether a test file defines name. A name ending in * stands for any with
// that prefix, and so does a name without an underscore (TestTemplate, a -run pattern: the
// project's test names are Subject_behaviour), or any name where run says it is go test's
// -run pattern.
func (r repo) hasFunc(name string, run bool) bool {
	if prefix, ok := strings.CutSuffix(name, "*"); ok {
		return strings.Contains(r.funcs, "func "+prefix)
	}
	if run || !strings.Contains(name, "_") {
		return strings.Contains(r.funcs, "func "+name)
	}
	return strings.Contains(r.funcs, "func "+name+"(")
}

// hasPath reports whether path (relative to the root, maybe a glob, maybe followed by a Go
// identifier as in pkg/operator/dlq.Redrive) exists.
func (r repo) hasPath(path string) bool {
	path = strings.TrimSuffix(path, "/")
	if r.files[path] {
		return true
	}
	if strings.ContainsAny(path, "*?[") {
		m, _ := filepath.Glob(path)
		return len(m) > 0
	}
	if dir, ident, ok := cutLast(path, "."); ok && ident != "" && unicode.IsUpper(rune(ident[0])) {
		return r.files[dir]
	}
	return false
}

// hasBase reports whether some file of the repository is named base.
func (r repo) hasBase(base string) bool {
	for f := range r.files {
		if filepath.Base(f) == base {
			return true
		}
	}
	return false
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
