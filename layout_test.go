package onceflow_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayout_engine_and_app_tests_need_nothing_from_infra lists every package that the
// packages under pkg/ and internal/ need, their tests included, and fails on any under infra/:
// infra/ (the local cloud and the workload) sits above the product, never below it.
func TestLayout_engine_and_app_tests_need_nothing_from_infra(t *testing.T) {
	const infra = "github.com/onceflow/onceflow/infra/"
	cmd := exec.Command(goTool(t), "list", "-deps", "-test",
		"-f", `{{.ImportPath}}|{{join .Imports " "}}`, "./pkg/...", "./internal/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -test ./pkg/... ./internal/...: %v\n%s", err, stderrOf(err))
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "|")
		pkg, _, _ = strings.Cut(pkg, " ") // "p [q.test]" is p as built for q's tests
		if strings.HasPrefix(pkg, infra) {
			continue // reported where it is imported, below
		}
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, infra) && !seen[pkg+" "+imp] {
				seen[pkg+" "+imp] = true
				t.Errorf("%s imports %s: pkg/ and internal/ (and their tests) must need nothing from infra/", pkg, imp)
			}
		}
	}
	if !strings.Contains(string(out), "github.com/onceflow/onceflow/pkg/idempotency") {
		t.Fatalf("go list named no engine package, so the check above checked nothing:\n%.500s", out)
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
