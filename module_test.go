package onceflow_test

import (
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// TestEngine_is_importable_by_another_module builds and tests pkg/testdata/shop, a module of
// its own that imports the public engine packages through a replace directive, as a service
// outside this repository would: a package moved back under internal/, or a public API change
// that breaks importers, fails here. Its tests run against the emulators of `make test`.
func TestEngine_is_importable_by_another_module(t *testing.T) {
	testkit.Emulator(t, testkit.EndpointVariable)
	testkit.Emulator(t, testkit.SQSEndpointVariable)
	cmd := exec.Command(goTool(t), "test", "-count=1", "./...")
	cmd.Dir = filepath.Join("pkg", "testdata", "shop")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	t.Logf("go test in %s:\n%s", cmd.Dir, out)
	if err != nil {
		t.Fatalf("the shop module does not build or pass its tests against the engine: %v", err)
	}
}

// goTool is the go command of the toolchain running this test, or the one on PATH.
func goTool(t *testing.T) string {
	if root := build.Default.GOROOT; root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build the importing module with: %v", err)
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
