package onceflow_test

import (
	"os"
	"os/exec"
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
