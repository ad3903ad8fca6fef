package onceflow_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// SAM runs `make build-<LogicalId>` with ARTIFACTS_DIR set; without it the target would write
// /bootstrap at the filesystem root, so it refuses to run.
func TestMakefile_build_target_without_ARTIFACTS_DIR_refuses_to_run(t *testing.T) {
	cmd := exec.Command("make", "build-LedgerFunction")
	cmd.Env = append(os.Environ(), "ARTIFACTS_DIR=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "ARTIFACTS_DIR is not set") || strings.Contains(string(out), "go build") {
		t.Fatalf("make build-LedgerFunction without ARTIFACTS_DIR: %v\n%s", err, out)
	}
	dry, err := exec.Command("make", "-n", "build-LedgerFunction", "ARTIFACTS_DIR=/tmp/artifacts").CombinedOutput()
	if err != nil || !strings.Contains(string(dry), "-o /tmp/artifacts/bootstrap ./functions/ledger") {
		t.Fatalf("make -n build-LedgerFunction ARTIFACTS_DIR=/tmp/artifacts: %v\n%s", err, dry)
	}
}

// The README shows make test's command line as make runs it: the line in its sample output is
// the Makefile's recipe, with the README's -p.
func TestMakefile_README_shows_make_tests_command_line(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^infra/emulators\.sh .*-p (\d+) .*$`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("README.md shows no make test command line (infra/emulators.sh ... -p N ...)")
	}
	dry, err := exec.Command("make", "-n", "test", "TEST_P="+m[1]).CombinedOutput()
	if err != nil {
		t.Fatalf("make -n test: %v\n%s", err, dry)
	}
	if !slices.Contains(strings.Split(string(dry), "\n"), m[0]) {
		t.Errorf("README.md's make test command line\n\t%s\nis not make's:\n%s", m[0], dry)
	}
}
