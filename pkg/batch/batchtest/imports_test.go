package batchtest_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A port in another module can run the suite only if nothing it compiles is internal to this
// one: the suite and everything it imports stay outside internal/. The engine's own
// pkg/internal/ (the idempotency table's layout and hold list) is part of the public packages
// that import it, compiled with them for any module (Go refuses only a direct import of it from
// outside pkg/): the suite may depend on it through them.
func TestBatchtest_imports_nothing_internal_to_the_module(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list listed %d packages; want the suite's dependencies", len(deps))
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/onceflow/onceflow/pkg/internal/") {
			continue
		}
		if strings.HasPrefix(d, "github.com/onceflow/onceflow/") && strings.Contains(d+"/", "/internal/") {
			t.Errorf("the suite depends on %s: an outside module cannot import it", d)
		}
	}
}
