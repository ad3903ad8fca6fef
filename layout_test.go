package onceflow_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayout_engine_and_app_tests_need_nothing_from_infra lists every package that the
// packages of internal/ need, their tests included, and fails on any under infra/: infra/ (the
// local cloud and the workload) sits above the product, never below it.
func TestLayout_engine_and_app_tests_need_nothing_from_infra(t *testing.T) {
	const infra = "github.com/onceflow/onceflow/infra/"
	for pkg, imp := range imports(t, ".", "./internal/...") {
		if strings.HasPrefix(imp, infra) && !strings.HasPrefix(pkg, infra) {
			t.Errorf("%s imports %s: internal/ (and its tests) must need nothing from infra/", pkg, imp)
		}
	}
}

// The engine is a module of its own (pkg/go.mod) that builds and tests alone: none of its
// packages or tests needs a package of this module (the application, the local cloud, the CLI).
func TestLayout_the_engines_module_needs_nothing_of_the_root_module(t *testing.T) {
	const engine = "github.com/onceflow/onceflow/pkg"
	named := false
	for pkg, imp := range imports(t, "pkg", "./...") {
		named = named || pkg == engine+"/idempotency"
		if strings.HasPrefix(imp, "github.com/onceflow/onceflow/") && !strings.HasPrefix(imp, engine+"/") {
			t.Errorf("%s imports %s, a package of the root module: the engine's module must build and test alone", pkg, imp)
		}
	}
	if !named {
		t.Fatal("go list in pkg/ named no engine package, so the check above checked nothing")
	}
}

// imports runs go list -deps -test on patterns in dir, its own module (no workspace), and
// returns each import of each package listed, as importer and imported (once each).
func imports(t *testing.T, dir string, patterns ...string) func(yield func(pkg, imp string) bool) {
	t.Helper()
	cmd := exec.Command(goTool(t), append([]string{"list", "-deps", "-test", "-f", `{{.ImportPath}}|{{join .Imports " "}}`}, patterns...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -test %s in %s: %v\n%s", strings.Join(patterns, " "), filepath.Clean(dir), err, stderrOf(err))
	}
	return func(yield func(pkg, imp string) bool) {
		seen := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, list, _ := strings.Cut(line, "|")
			pkg, _, _ = strings.Cut(pkg, " ") // "p [q.test]" is p as built for q's tests
			for _, imp := range strings.Fields(list) {
				if !seen[pkg+" "+imp] {
					seen[pkg+" "+imp] = true
					if !yield(pkg, imp) {
						return
					}
				}
			}
		}
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
