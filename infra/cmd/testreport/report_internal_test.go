package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The streams in testdata were recorded from `go test -json` of small packages made to pass
// and to fail each way (tj/ok, tj/fail, ...); a case runs testreport on a fake go test that
// prints them and exits with a status of its choice.
func TestReport_exit_status_is_non_zero_whenever_something_failed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		streams []string
		status  int      // the fake go test's
		want    int      // testreport's
		says    []string // in its output, in this order
	}{
		{"every package passed", []string{"pass"}, 0, 0,
			[]string{"ok    tj/ok", "PASS: 1 packages", "tests: 1 passed, 0 failed, 1 skipped"}},
		{"a failed test", []string{"pass", "fail"}, 1, 1,
			[]string{"FAIL  tj/fail", "--- FAIL: TestBad/sub", "fail_test.go:4: want 1 got 2", "FAIL: 2 packages", "1 ok, 1 failed", "FAIL  tj/fail: TestBad/sub, TestBad"}},
		{"a build failure", []string{"build"}, 1, 1,
			[]string{"FAIL  tj/build", "build failed:", "b_test.go:3:27: undefined: undefined", "FAIL  tj/build: build failed"}},
		{"a panic", []string{"panic"}, 1, 1,
			[]string{"--- FAIL: TestP", "panic: boom", "p_test.go:3", "FAIL  tj/panicky: TestP"}},
		{"a timeout", []string{"timeout"}, 1, 1,
			[]string{"--- FAIL: TestSlow (did not finish", "panic: test timed out after 2s", "TestSlow (2s)", "FAIL  tj/slow: stopped while running TestSlow"}},
		{"a test binary killed", []string{"killed"}, 1, 1,
			[]string{"--- FAIL: TestK (did not finish", "k_test.go:3: about to die", "signal: killed", "FAIL  tj/killed: stopped while running TestK"}},
		{"a failure go test did not count", []string{"fail"}, 0, 1,
			[]string{"FAIL  tj/fail", "FAIL: 1 packages"}},
		{"go test failed with a clean stream", []string{"pass"}, 2, 2,
			[]string{"ok    tj/ok", "FAIL: 1 packages", "go test exited with status 2"}},
		{"go test killed midway", []string{"pass", "truncated"}, 137, 137,
			[]string{"ok    tj/ok", "FAIL: 2 packages", "FAIL  tj/fail: did not finish (go test ended first) while running TestBad", "go test exited with status 137"}},
		{"a truncated stream, status 0", []string{"truncated"}, 0, 1,
			[]string{"FAIL  tj/fail: did not finish"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, got, logs := fakeRun(t, tc.status, tc.streams...)
			if got != tc.want {
				t.Errorf("exit status %d, want %d; output:\n%s", got, tc.want, out)
			}
			inOrder(t, out, tc.says...)
			if len(logs) != len(tc.streams) {
				t.Errorf("logs %v, want one per package of %v", logs, tc.streams)
			}
		})
	}
}

// Passing tests' logs go to the package's log only; a failed test prints its own lines (those
// its test file wrote) first, then the last lines of the rest of its output.
func TestReport_a_failed_test_shows_its_own_lines_first_and_passing_logs_only_in_files(t *testing.T) {
	out, _, logs := fakeRun(t, 1, "fail", "noisy")
	if strings.Contains(out, "noise\n") || strings.Contains(out, "INFO applied") && !strings.Contains(out, "its other output") {
		t.Errorf("a passing test's log is in the output:\n%s", out)
	}
	b, err := os.ReadFile(logs[0])
	if err != nil || !strings.Contains(string(b), "fail_test.go:3: noise") || !strings.Contains(string(b), "=== RUN   TestGood") {
		t.Errorf("the package's log %s lacks the passing test's lines (%v):\n%s", logs[0], err, b)
	}
	inOrder(t, out, "--- FAIL: TestNoisy", "noisy_test.go:9: balance 5, want 0",
		"        got: 5", "its other output: 20 lines", "INFO applied 19", "FAIL: 2 packages")
	if strings.Contains(out, "INFO applied 4\n") {
		t.Errorf("more than the last lines of the failed test's other output:\n%s", out)
	}
}

// fakeRun runs testreport on a fake go test that prints the streams and exits with status.
func fakeRun(t *testing.T, status int, streams ...string) (string, int, []string) {
	t.Helper()
	var files []string
	for _, s := range streams {
		files = append(files, filepath.Join("testdata", s+".json"))
	}
	dir := t.TempDir()
	var out bytes.Buffer
	got := run([]string{"-logs", dir, "--", "sh", "-c", fmt.Sprintf(`cat "$@"; exit %d`, status), "sh"}, &out, files...)
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	return out.String(), got, logs
}

func inOrder(t *testing.T, out string, says ...string) {
	t.Helper()
	rest := out
	for _, s := range says {
		i := strings.Index(rest, s)
		if i < 0 {
			t.Errorf("output lacks %q after what came before it:\n%s", s, out)
			return
		}
		rest = rest[i+len(s):]
	}
}
