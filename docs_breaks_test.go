package onceflow_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docs/recovery-model.md's table of the Go code broken step by step is the runner's list
// (pkg/internal/breaks/breaks_test.go): each break is a row, with its step, file, package and
// the tests that fail, and each row a break; the score line counts its steps and breaks.
func TestDocs_recovery_model_md_lists_each_break_of_the_go_code(t *testing.T) {
	page, err := os.ReadFile("docs/recovery-model.md")
	if err != nil {
		t.Fatal(err)
	}
	breaks := goBreaks(t, "pkg/internal/breaks/breaks_test.go")
	if len(breaks) < 15 {
		t.Fatalf("found %d breaks in pkg/internal/breaks/breaks_test.go; its table's shape changed", len(breaks))
	}
	rows := breakRows(string(page))
	steps := map[string]bool{}
	for what, b := range breaks {
		steps[b["step"]] = true
		row, ok := rows[what]
		if !ok {
			t.Errorf("break %q is in the runner's list but no row of docs/recovery-model.md's table", what)
			continue
		}
		want := []string{b["step"], what, "`pkg/" + b["file"] + "`", "`pkg/" + b["pkg"] + "`", b["caught"]}
		for i, cell := range want {
			if row[i] != cell {
				t.Errorf("break %q: the page's cell %d says %q; the runner's list %q", what, i+1, row[i], cell)
			}
		}
	}
	for what := range rows {
		if _, ok := breaks[what]; !ok {
			t.Errorf("%q is a row of docs/recovery-model.md's table but no break of the runner's list", what)
		}
	}
	m := regexp.MustCompile(`Score: \*\*(\d+) of (\d+) steps\*\* caught, (\d+) of (\d+) breaks\.`).FindStringSubmatch(string(page))
	if m == nil {
		t.Fatal("docs/recovery-model.md has no score line (Score: **n of n steps** caught, n of n breaks.)")
	}
	for i, want := range []int{len(steps), len(steps), len(breaks), len(breaks)} {
		if got, _ := strconv.Atoi(m[i+1]); got != want {
			t.Errorf("score line %q: figure %d is %d; the runner's list makes it %d (make test fails unless every break is caught)", m[0], i+1, got, want)
		}
	}
}

// goBreaks reads the runner's list of breaks, by what each does: its step, file, package and
// the tests it names (as the page writes them: each in backquotes, comma separated).
func goBreaks(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	breaks := map[string]map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || !isIdent(lit.Type, "brk") && lit.Type != nil {
			return true
		}
		b := map[string]string{}
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, _ := kv.Key.(*ast.Ident)
			switch v := kv.Value.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(v.Value); err == nil && key != nil {
					b[key.Name] = s
				}
			case *ast.CompositeLit: // caught
				var tests []string
				for _, e := range v.Elts {
					if s, ok := e.(*ast.BasicLit); ok {
						u, _ := strconv.Unquote(s.Value)
						tests = append(tests, "`"+u+"`")
					}
				}
				b["caught"] = strings.Join(tests, ", ")
			}
		}
		if b["what"] != "" {
			breaks[b["what"]] = b
		}
		return true
	})
	return breaks
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// breakRows returns the rows of the table under "### The Go code broken step by step", by
// their second cell (the break).
func breakRows(page string) map[string][]string {
	_, section, _ := strings.Cut(page, "\n### The Go code broken step by step\n")
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| step |") {
			continue
		}
		if cells := strings.Split(strings.Trim(line, "| "), " | "); len(cells) == 5 {
			rows[cells[1]] = cells
		}
	}
	return rows
}
