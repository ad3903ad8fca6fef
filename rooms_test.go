package onceflow_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The engine's public packages are rooms by audience, and a name lives in one of them: no
// package under pkg/ declares a type alias, or re-exports a constant or variable of another
// public package; no exported type is declared as another named type, whose go doc would show
// no fields; and the consumer author's package stays small enough to read at a glance.
func TestRooms_a_name_lives_in_one_package_and_go_doc_shows_its_fields(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir("pkg", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, problem := range roomProblems(f) {
			t.Errorf("%s: %s", path, problem)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files under pkg/; the check read too little to mean anything", files)
	}
}

// roomProblems returns what f declares against the rooms' rules.
func roomProblems(f *ast.File) []string {
	public := map[string]string{} // import name -> path, of the engine's public packages
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !strings.HasPrefix(path, "github.com/onceflow/onceflow/pkg/") || strings.Contains(path, "/internal/") {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		public[name] = path
	}
	var out []string
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gen.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if s.Assign.IsValid() {
					out = append(out, "type "+s.Name.Name+" is an alias: declare the name in one package, and use it from there")
				} else if s.Name.IsExported() && namedElsewhere(s.Type) {
					out = append(out, "type "+s.Name.Name+" is another named type: go doc shows none of its fields")
				}
			case *ast.ValueSpec:
				for i, name := range s.Names {
					if i >= len(s.Values) || !name.IsExported() {
						continue
					}
					if sel, ok := s.Values[i].(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && public[x.Name] != "" {
							out = append(out, name.Name+" re-exports "+x.Name+"."+sel.Sel.Name+": use it from "+public[x.Name])
						}
					}
				}
			}
		}
	}
	return out
}

// namedElsewhere reports whether a type declaration's type is another named type (a type of
// another package, or a generic's instance) rather than a literal or a predeclared type.
func namedElsewhere(t ast.Expr) bool {
	switch t := t.(type) {
	case *ast.SelectorExpr, *ast.IndexExpr, *ast.IndexListExpr:
		return true
	case *ast.Ident:
		return !predeclared[t.Name]
	}
	return false
}

var predeclared = map[string]bool{"bool": true, "byte": true, "rune": true, "string": true, "error": true, "any": true,
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uintptr": true,
	"float32": true, "float64": true, "complex64": true, "complex128": true}

// The consumer author's package fits a screen: `go doc -short` lists at most 40 lines.
func TestRooms_the_consumer_authors_package_fits_forty_lines_of_go_doc(t *testing.T) {
	out, err := exec.Command(goTool(t), "doc", "-short", "./pkg/idempotency").Output()
	if err != nil {
		t.Fatalf("go doc -short ./pkg/idempotency: %v\n%s", err, stderrOf(err))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 40 || !strings.Contains(string(out), "func New(") {
		t.Errorf("go doc -short ./pkg/idempotency is %d lines; want at most 40, New among them:\n%s", len(lines), out)
	}
}
