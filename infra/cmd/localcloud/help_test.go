package main_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalcloud_help_is_an_answer_not_a_usage_error: asked for help, the tool prints its usage
// on its standard output and exits 0; an unknown command is still a usage error (2, on its
// standard error).
func TestLocalcloud_help_is_an_answer_not_a_usage_error(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "localcloud")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, arg := range []string{"help", "-h", "--help", "-help"} {
		cmd := exec.Command(bin, arg)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("localcloud %s: %v; want exit 0\n%s", arg, err, stderr.String())
		}
		if !strings.Contains(string(out), "localcloud up ") {
			t.Errorf("localcloud %s printed %q on its standard output; want the usage", arg, out)
		}
	}
	cmd := exec.Command(bin, "bogus")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	var exit *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("localcloud bogus: %v; want exit 2", err)
	}
	if !strings.Contains(stderr.String(), "usage:") {
		t.Errorf("localcloud bogus said %q; want the usage", stderr.String())
	}
}
