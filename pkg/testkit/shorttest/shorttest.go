// Package shorttest checks that a test skips under `go test -short` on a machine without the
// tools `make test` installs. It imports only the standard library, so a test binary that uses
// it links nothing more.
package shorttest

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Skips runs the top-level test named test of this test binary again, under -short with an
// empty PATH, as `go test -short ./...` runs on a fresh clone that has none of the tools
// `make test` installs (SPIN, a C compiler, Chromium), and fails unless that test skipped,
// saying that `make test` runs it.
func Skips(t *testing.T, test string) {
	t.Helper()
	if test == t.Name() {
		t.Fatalf("shorttest.Skips(%q) from that test would run itself again without end", test)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("this test binary's path: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.short", "-test.v", "-test.count=1", "-test.timeout=1m",
		"-test.run", "^"+regexp.QuoteMeta(test)+"$")
	cmd.Env = append(os.Environ(), "PATH=")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s under -short without the tools make test installs: %v\n%s", test, err, out)
	}
	if !strings.Contains(string(out), "--- SKIP: "+test) || !strings.Contains(string(out), "make test") {
		t.Fatalf("%s under -short did not skip saying that make test runs it:\n%s", test, out)
	}
}
