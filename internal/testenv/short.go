package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// ShortSkips runs the test named test of this test binary again under -short with an empty
// PATH, as `go test -short ./...` runs on a fresh clone that has none of the tools `make test`
// installs (SPIN, a C compiler, Chromium), and fails unless that test skipped, saying that
// `make test` runs it.
func ShortSkips(t *testing.T, test string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.short", "-test.v", "-test.count=1", "-test.run", "^"+test+"$")
	cmd.Env = append(os.Environ(), "PATH=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s under -short without the tools make test installs: %v\n%s", test, err, out)
	}
	if !strings.Contains(string(out), "--- SKIP: "+test) || !strings.Contains(string(out), "make test") {
		t.Fatalf("%s under -short did not skip saying that make test runs it:\n%s", test, out)
	}
}
