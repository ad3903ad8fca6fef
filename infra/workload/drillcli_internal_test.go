package workload

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// stateDirOnly is a Cloud of which the drill's CLI needs only the state directory.
type stateDirOnly string

func (s stateDirOnly) Endpoints() localcloud.Endpoints           { return localcloud.Endpoints{} }
func (s stateDirOnly) Stats() localcloud.Stats                   { return localcloud.Stats{} }
func (s stateDirOnly) Functions() map[string]localcloud.Function { return nil }
func (s stateDirOnly) StateDir() string                          { return string(s) }

// cliScript writes a stand-in for the operator's CLI that answers its first `refusals` calls
// with the given output and exit status 1, and every later one with "done".
func cliScript(t *testing.T, refusals int, refusal string) (path, calls string) {
	t.Helper()
	dir := t.TempDir()
	calls = filepath.Join(dir, "calls")
	path = filepath.Join(dir, "onceflow")
	script := "#!/bin/sh\necho x >> " + calls + "\n" +
		"if [ $(wc -l < " + calls + ") -le " + strconv.Itoa(refusals) + " ]; then echo '" + refusal + "'; exit 1; fi\necho done\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, calls
}

func callsMade(t *testing.T, calls string) int {
	t.Helper()
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// Under traffic a live message can join the hold between the CLI's look and its conditional
// write: the CLI refuses, nothing written, and says to look again. The drill, as an operator
// would, runs the command again (a CI run lost its whole drill to one such refusal).
func TestDrillCLI_looks_again_when_the_hold_changed_since_it_was_read(t *testing.T) {
	cli, calls := cliScript(t, 2, "onceflow hold skip: refused, nothing written: hold of group acct-001: changed since it was read (look again and decide on what is there now)")
	r := &run{cfg: Config{CLI: cli}, cloud: stateDirOnly(t.TempDir())}
	var st drillStats
	out, err := r.cliSkip(context.Background(), &st, "acct-001")
	if err != nil {
		t.Fatalf("a command refused because the hold changed is run again until it is not: %v", err)
	}
	if !strings.Contains(out, "done") || callsMade(t, calls) != 3 || st.commands != 3 {
		t.Errorf("out %q, %d calls, %d commands counted; want done after 3 of each", out, callsMade(t, calls), st.commands)
	}
}

// A skip that wrote and then failed (its letter not moved), or whose output has the words only
// in a held message's reason, is not run again: a second skip would skip the next head.
func TestDrillCLI_does_not_repeat_a_skip_that_failed_another_way(t *testing.T) {
	cli, calls := cliScript(t, 5, `{"reason":"hold of group acct-001: changed since it was read"}\nonceflow hold skip: skipped, but its letter not moved: boom`)
	r := &run{cfg: Config{CLI: cli}, cloud: stateDirOnly(t.TempDir())}
	var st drillStats
	if _, err := r.cliSkip(context.Background(), &st, "acct-001"); err == nil || !strings.Contains(err.Error(), "letter not moved") {
		t.Fatalf("err = %v, want the failure", err)
	}
	if n := callsMade(t, calls); n != 1 {
		t.Errorf("%d calls, want 1: only a refusal that wrote nothing is looked at again", n)
	}
}
