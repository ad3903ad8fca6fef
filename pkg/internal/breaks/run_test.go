package breaks_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/child"
)

// TestMain starts the emulators the broken steps' test runs share (testkit.Main).
func TestMain(m *testing.M) { testkit.Main(m) }

// The Go counterpart of the model's BREAK list: each step of the protocol (breaks), switched
// off or weakened in a copy of its file that `go test -overlay` builds in its place, fails a
// test of the package that owns the step. The code on disk is never changed. make test runs,
// for each break, the tests it names (caught), and each of them must fail; `make break`
// (BREAK=all) runs every test of the package and prints every one that failed.
func TestBreak_each_step_fails_a_test_in_its_own_package(t *testing.T) {
	testkit.SkipShort(t)
	testkit.Emulator(t, testkit.EndpointVariable) // started once here, inherited by every run below
	testkit.Emulator(t, testkit.SQSEndpointVariable)
	root, err := filepath.Abs("../..") // the engine's module
	if err != nil {
		t.Fatal(err)
	}
	all := os.Getenv("BREAK") == "all"
	for i, b := range breaks {
		if slices.ContainsFunc(breaks[:i], func(o brk) bool { return o.what == b.what }) {
			t.Fatalf("two breaks do %q: each needs words of its own (docs/recovery-model.md's table knows them by it)", b.what)
		}
	}
	var (
		mu     sync.Mutex
		failed = map[string][]string{} // break name -> the tests that failed
	)
	start := time.Now()
	t.Run("each", func(t *testing.T) {
		for _, b := range breaks {
			t.Run(b.name(), func(t *testing.T) {
				t.Parallel()
				got := b.run(t, root, all)
				mu.Lock()
				failed[b.name()] = got
				mu.Unlock()
			})
		}
	})
	steps := map[string]bool{} // step -> every break of it caught
	var table strings.Builder
	n := 0
	for _, b := range breaks {
		got := failed[b.name()]
		ok := len(got) > 0 && !slices.ContainsFunc(b.caught, func(c string) bool { return !slices.Contains(got, c) })
		verdict := "NOT CAUGHT"
		if ok {
			verdict = "caught by " + strings.Join(got, ", ")
			n++
		}
		if _, seen := steps[b.step]; !seen {
			steps[b.step] = true
		}
		steps[b.step] = steps[b.step] && ok
		fmt.Fprintf(&table, "%-6s %-16s %s: %s\n", b.step, b.pkg, b.what, verdict)
	}
	caught := 0
	for _, ok := range steps {
		if ok {
			caught++
		}
	}
	t.Logf("broken steps (%s):\n%s", time.Since(start).Round(time.Second), table.String())
	t.Logf("score: %d of %d steps caught (%d of %d breaks)", caught, len(steps), n, len(breaks))
}

// name is the break's subtest name: its step and its number among the step's breaks.
func (b brk) name() string {
	i := 0
	for _, o := range breaks {
		if o.step == b.step {
			i++
		}
		if o.what == b.what {
			break
		}
	}
	return fmt.Sprintf("%s.%d", b.step, i)
}

// run applies b in an overlay and runs its package's tests (only those b names, unless all),
// returning the top-level tests that failed; it fails t when b no longer applies, does not
// build, or a test it names passed.
func (b brk) run(t *testing.T, root string, all bool) []string {
	file := filepath.Join(root, b.file)
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(src, []byte(b.old)); n != 1 {
		t.Fatalf("%s: the text it replaces is in %s %d times, want once: the code moved, change the break with it", b.what, b.file, n)
	}
	dir := t.TempDir()
	broken := filepath.Join(dir, filepath.Base(file))
	if err := os.WriteFile(broken, bytes.Replace(src, []byte(b.old), []byte(b.new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {file: broken}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"test", "-overlay", filepath.Join(dir, "overlay.json"), "-count=1", "-vet=off", "-json", "-timeout", "10m"}
	if !all {
		args = append(args, "-run", "^("+strings.Join(b.caught, "|")+")$")
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(t.Context(), "go", append(args, "./"+b.pkg+"/")...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = root, append(os.Environ(), "GOWORK=off"), &out, &out
	if err := child.Start(cmd, syscall.SIGKILL); err != nil { // go ends with this test binary; its test binary by its -timeout
		t.Fatal(err)
	}
	_ = cmd.Wait() // a failing test is what a break is for: failures reads the verdict
	got, ran := failures(out.Bytes())
	switch {
	case !ran:
		t.Fatalf("%s: no test of %s ran (does the break build?):\n%s", b.what, b.pkg, tail(out.Bytes()))
	case len(got) == 0:
		t.Errorf("%s: every test of %s passed", b.what, b.pkg)
	}
	for _, c := range b.caught {
		if !slices.Contains(got, c) {
			t.Errorf("%s: %s passed; the break's list (and docs/recovery-model.md) says it fails", b.what, c)
		}
	}
	t.Logf("%s: failed %v", b.what, got)
	return got
}

// failures reads go test -json's events: the top-level tests that failed, and whether any
// test ran at all.
func failures(out []byte) (failed []string, ran bool) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct{ Action, Test string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test == "" {
			continue
		}
		ran = ran || ev.Action == "run"
		top, _, _ := strings.Cut(ev.Test, "/")
		if ev.Action == "fail" && !slices.Contains(failed, top) {
			failed = append(failed, top)
		}
	}
	slices.Sort(failed)
	return failed, ran
}

// tail is the last lines of a run's output.
func tail(out []byte) string {
	lines := strings.Split(string(out), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}
