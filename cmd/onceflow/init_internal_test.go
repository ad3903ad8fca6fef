package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// onceflow init writes a project outside this repository whose own make test passes (its
// test-kit test against DynamoDB Local) and whose make run passes on the local cloud (a
// workload with re-sends, events sent again under a new message id and a message redelivered
// after its commit, every invariant PASS);
// onceflow add-consumer adds a second consumer, whose test passes beside the first. (The
// template of two consumers is the consumer unit's, which its own tests check.) The project's
// go.sum is go mod tidy's at init: its targets run with -mod=readonly and no workspace.
func TestInit_writes_a_project_whose_make_test_and_make_run_pass(t *testing.T) {
	testkit.SkipShort(t) // the project's tests and the local cloud need the emulators
	bin := t.TempDir()
	goCmd(t, "build", "-o", filepath.Join(bin, "onceflow"), ".")
	goCmd(t, "build", "-o", filepath.Join(bin, "localcloud"), "../../infra/cmd/localcloud")
	dir := filepath.Join(t.TempDir(), "shop")
	t.Cleanup(func() { // whatever failed, nothing of the local cloud outlives the test
		_ = exec.Command(filepath.Join(bin, "localcloud"), "down", "-state", filepath.Join(dir, ".local")).Run()
	})
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly", "LOCALCLOUD="+filepath.Join(bin, "localcloud"))

	out := runIn(t, "", env, filepath.Join(bin, "onceflow"), "init", dir, "--module", "example.com/shop", "--queue", "orders", "--event", "order.placed")
	for _, f := range []string{"go.mod", "go.sum", "Makefile", "template.yaml", "README.md", "internal/orders/orders.go",
		"internal/orders/orders_test.go", "functions/orders/main.go", "events/orders-batch.json"} {
		if !strings.Contains(out, "wrote "+f+"\n") {
			t.Errorf("init did not say it wrote %s:\n%s", f, out)
		}
	}
	wantTests(t, runIn(t, dir, env, "make", "test"), "orders")
	wantRun(t, runIn(t, dir, env, "make", "run"), "orders")
	wantCloudKept(t, dir, env, filepath.Join(bin, "localcloud"))

	runIn(t, "", env, filepath.Join(bin, "onceflow"), "add-consumer", dir, "--queue", "refunds", "--event", "refund.issued")
	wantTests(t, runIn(t, dir, env, "make", "test"), "orders", "refunds")
}

// runIn runs name with args in dir and returns its output; it fails the test when it fails.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s (%s):\n%s", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Millisecond), out.String())
	if err != nil {
		t.Fatalf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), err)
	}
	return out.String()
}

func wantTests(t *testing.T, out string, consumers ...string) {
	t.Helper()
	for _, c := range consumers {
		if !regexp.MustCompile(`(?m)^ok\s+example\.com/shop/internal/` + c + `\s`).MatchString(out) {
			t.Errorf("make test: no passing package internal/%s", c)
		}
	}
}

func wantRun(t *testing.T, out string, consumers ...string) {
	t.Helper()
	for _, c := range consumers {
		if n := len(regexp.MustCompile(`(?m)^  PASS  `+c+`: `).FindAllString(out, -1)); n != 5 {
			t.Errorf("make run: %d invariants of %s PASS; want 5", n, c)
		}
	}
	if strings.Contains(out, "FAIL") || !regexp.MustCompile(`(?m)^PASS$`).MatchString(out) {
		t.Errorf("make run: want every invariant PASS and PASS at the end")
	}
}

// wantCloudKept brings the project's local cloud up, checks that make run then leaves it up
// (its localcloud up refuses, and it stops without localcloud down) and that localcloud invoke
// reads the function's outcome from its JSON log lines, and brings the cloud down.
func wantCloudKept(t *testing.T, dir string, env []string, localcloud string) {
	t.Helper()
	runIn(t, dir, env, localcloud, "up")
	cmd := exec.CommandContext(t.Context(), "make", "run")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already up") {
		t.Errorf("make run with the cloud up: %v; want it refused as already up:\n%s", err, out)
	}
	invoked := runIn(t, dir, env, localcloud, "invoke", "OrdersFunction", "events/orders-batch.json")
	if !strings.Contains(invoked, "00000000-0000-4000-8000-000000000001  applied") {
		t.Errorf("localcloud invoke after make run: the sample message not applied, or its outcome not read; was the cloud torn down, or are the function's logs not JSON?")
	}
	runIn(t, dir, env, localcloud, "down")
}
