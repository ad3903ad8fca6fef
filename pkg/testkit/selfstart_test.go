package testkit_test

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/shorttest"
)

// helperVariable runs TestHelperStartsDynamoDB for real: this test binary, started again by
// the tests below, is then a test binary that finds no DynamoDB Local.
const helperVariable = "TESTKIT_HELPER"

// TestHelperStartsDynamoDB is the test binary the tests below start: with DYNAMODB_ENDPOINT
// unset, testkit.DynamoDB starts DynamoDB Local; it prints its URL, then waits to be killed
// when asked. Without helperVariable it does nothing.
func TestHelperStartsDynamoDB(t *testing.T) {
	if os.Getenv(helperVariable) == "" {
		return
	}
	db := testkit.DynamoDB(t)
	if _, err := db.ListTables(context.Background(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("the DynamoDB Local it started does not answer: %v", err)
	}
	os.Stdout.WriteString("url=" + os.Getenv(testkit.EndpointVariable) + "\n")
	if os.Getenv(helperVariable) == "wait" {
		time.Sleep(10 * time.Minute)
	}
}

// helper starts TestHelperStartsDynamoDB in a test binary of its own without DYNAMODB_ENDPOINT
// (mode "run" or "wait"), and returns it and the URL it printed.
func helper(t *testing.T, mode string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperStartsDynamoDB$", "-test.v", "-test.count=1")
	cmd.Env = append(withoutEndpoints(os.Environ()), append(env, helperVariable+"="+mode)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	var said []string
	for lines.Scan() {
		said = append(said, lines.Text())
		if url, ok := strings.CutPrefix(lines.Text(), "url="); ok {
			go func() { // the rest, so that the binary never blocks writing it
				for lines.Scan() {
				}
			}()
			return cmd, url
		}
	}
	_ = cmd.Wait()
	t.Fatalf("the test binary printed no URL:\n%s", strings.Join(said, "\n"))
	return nil, ""
}

// A test binary run through testkit.Main that finds no DYNAMODB_ENDPOINT starts DynamoDB Local
// itself, and stops it when its tests end.
func TestEmulator_unset_starts_the_emulator_for_the_test_binary_and_stops_it_after(t *testing.T) {
	testkit.SkipShort(t)
	t.Parallel()
	cmd, url := helper(t, "run")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the test binary that started DynamoDB Local failed: %v", err)
	}
	if answers(url) {
		t.Errorf("DynamoDB Local at %s still answers after its test binary ended", url)
	}
}

// The emulator a test binary started dies with it, even when the binary is killed with SIGKILL
// and runs nothing more (the parent-death signal, package child).
func TestEmulator_started_dies_with_its_test_binary_killed_with_SIGKILL(t *testing.T) {
	testkit.SkipShort(t)
	t.Parallel()
	cmd, url := helper(t, "wait")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for deadline := time.Now().Add(time.Minute); answers(url); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("DynamoDB Local at %s still answers a minute after its test binary was killed", url)
		}
	}
}

// An emulator test that cannot start its emulator fails, saying why; it never passes or skips.
func TestEmulator_that_cannot_start_fails_the_test_saying_why(t *testing.T) {
	testkit.SkipShort(t)
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperStartsDynamoDB$", "-test.count=1")
	cmd.Env = append(withoutEndpoints(os.Environ()), helperVariable+"=run", "PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--- FAIL: TestHelperStartsDynamoDB") ||
		!strings.Contains(string(out), "DYNAMODB_ENDPOINT is not set, and DynamoDB Local could not start") ||
		!strings.Contains(string(out), "not found") {
		t.Fatalf("without java or npm on PATH: %v\n%s\nwant the test failed, naming the variable and what is missing", err, out)
	}
}

// Under -short, on a machine without Java or Node.js, an emulator test skips (go test -short
// ./... passes on a fresh clone with Go alone).
func TestEmulator_under_short_skips_without_java_or_node(t *testing.T) {
	t.Setenv(helperVariable, "run")
	t.Setenv(testkit.EndpointVariable, "")
	shorttest.Skips(t, "TestHelperStartsDynamoDB")
}

// withoutEndpoints is env without the emulators' variables.
func withoutEndpoints(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name != testkit.EndpointVariable && name != testkit.SQSEndpointVariable && name != testkit.KinesisEndpointVariable {
			out = append(out, kv)
		}
	}
	return out
}

// answers reports whether an HTTP server answers at url.
func answers(url string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}
