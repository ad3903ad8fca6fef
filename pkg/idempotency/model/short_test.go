package model_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestModel_short_run_skips_the_checks_and_needs_no_SPIN runs this test binary again with -short
// and an empty PATH, as on a fresh clone without SPIN or a C compiler: `go test -short ./...`
// must pass there, so the model's checks skip, saying how to run them.
func TestModel_short_run_skips_the_checks_and_needs_no_SPIN(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.short", "-test.v", "-test.run", "^TestModel_recovery_protocol$")
	cmd.Env = append(os.Environ(), "PATH=", "MODEL=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the model's test under -short without SPIN: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- SKIP: TestModel_recovery_protocol") || !strings.Contains(string(out), "make test") {
		t.Fatalf("the model's test under -short did not skip saying how to run it:\n%s", out)
	}
}
