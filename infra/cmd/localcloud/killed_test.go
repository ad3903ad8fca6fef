package main_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/infra/reap"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A run killed midway leaves no process, however it is killed: infra/emulators.sh around
// `localcloud serve` (as make test runs a test binary that starts a local cloud), with the
// function's bootstrap in an invocation, every emulator (emulators.sh's and the cloud's own),
// the Runtime Interface Emulator and reap alive. The run's processes are those whose
// environment carries the test's mark (reap.Find reads /proc).
func TestRun_killed_midway_leaves_no_process(t *testing.T) {
	testkit.SkipShort(t) // it starts emulators and a local cloud
	bin := buildCLI(t)
	for _, tc := range []struct {
		name string
		bare bool // `localcloud serve` alone, without emulators.sh and reap: as make up runs it
		kill func(r *killRun) error
	}{
		// make test killed: the shell standing for make gets SIGKILL; reap, its child, gets
		// SIGTERM from the kernel (its parent-death signal) and sweeps.
		{"make_killed", false, func(r *killRun) error { return r.parent.Process.Kill() }},
		// Ctrl-C: SIGINT to the whole foreground process group.
		{"ctrl-c", false, func(r *killRun) error { return syscall.Kill(-r.parent.Process.Pid, syscall.SIGINT) }},
		// emulators.sh (by then reap) killed: its watchdog sweeps.
		{"emulators.sh_killed", false, func(r *killRun) error { return syscall.Kill(r.pid("reap -run"), syscall.SIGKILL) }},
		// The process that holds the local cloud (a test binary, localcloud serve) killed: what
		// it started dies with it (parent-death signals); reap sweeps what is left when its
		// command has ended.
		{"localcloud_killed", false, func(r *killRun) error { return syscall.Kill(r.pid("localcloud serve"), syscall.SIGKILL) }},
		// The same with no reap to sweep: the parent-death signals alone end the cloud's
		// emulators, its Runtime Interface Emulator and the bootstrap.
		{"localcloud_killed_without_reap", true, func(r *killRun) error { return syscall.Kill(r.pid("localcloud serve"), syscall.SIGKILL) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := startKillRun(t, bin, tc.bare)
			r.busy(t)
			before := r.find()
			want := []string{"java", "fauxqs.mjs", "localcloud serve", "aws-lambda-rie", "bootstrap"}
			if !tc.bare {
				want = append(want, "reap -run", "reap -watch", "kinesalite")
			}
			for _, w := range want {
				if !hasCommand(before, w) {
					t.Fatalf("no %q among the run's processes before the kill (the test would prove nothing):\n%s", w, list(before))
				}
			}
			if err := tc.kill(r); err != nil {
				t.Fatal(err)
			}
			r.waitParent(t)
			if left := waitNone(r.id, time.Minute); len(left) > 0 {
				t.Fatalf("%d processes of the run outlived it by a minute (of %d before the kill):\n%s", len(left), len(before), list(left))
			}
		})
	}
}

// killRun is a run of infra/emulators.sh around `localcloud serve` (or, bare, of `localcloud
// serve` alone), under a shell that stands for make, in a process group of its own (as a
// terminal runs make).
type killRun struct {
	id, state string
	parent    *exec.Cmd
	exited    chan error
}

func startKillRun(t *testing.T, bin string, bare bool) *killRun {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := &killRun{id: reap.NewRun(), state: filepath.Join(dir, "state"), exited: make(chan error, 1)}
	argv := []string{bin, "serve", "-template", filepath.Join("..", "..", "localcloud", "testdata", "one", "template.yaml"), "-state", r.state,
		"-prefix", fmt.Sprintf("killed%d", time.Now().UnixNano())}
	if !bare {
		argv = append([]string{filepath.Join(root, "infra", "emulators.sh")}, argv...)
	}
	// `; exit` keeps the shell from exec'ing the command: it stays its parent, as make is.
	r.parent = exec.Command("bash", append([]string{"-c", `"$0" "$@"; exit $?`}, argv...)...)
	r.parent.Env = append(reap.Mark(os.Environ(), r.id), "EMULATORS_LOGS="+filepath.Join(dir, "logs"))
	r.parent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := os.Create(filepath.Join(dir, "out.log"))
	if err != nil {
		t.Fatal(err)
	}
	r.parent.Stdout, r.parent.Stderr = out, out
	if err := r.parent.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exited <- r.parent.Wait(); out.Close() }()
	t.Cleanup(func() { // whatever failed, this test leaves nothing running
		_ = r.parent.Process.Kill()
		reap.Sweep(r.id, time.Second)
		if t.Failed() {
			b, _ := os.ReadFile(out.Name())
			t.Logf("the run's output:\n%s", b)
		}
	})
	return r
}

// busy waits until the cloud is up, then keeps its bootstrap in an invocation (the echo's
// sleep) and waits until the bootstrap has logged the request.
func (r *killRun) busy(t *testing.T) {
	t.Helper()
	var ep localcloud.Endpoints
	err := poll(4*time.Minute, func() (err error) {
		select {
		case err := <-r.exited:
			return fmt.Errorf("the run ended before the cloud was up: %v", err)
		default:
		}
		ep, err = localcloud.ReadEndpoints(r.state)
		return err
	})
	if err != nil {
		t.Fatalf("local cloud not up: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		_, _ = localcloud.NewLambdaAPI(ep.LambdaURL).Invoke(ctx, "Echo", []byte(`{"pathParameters":{"id":"sleep"}}`))
	}()
	err = poll(time.Minute, func() error {
		for _, f := range localcloud.LogFiles(r.state, "Echo") {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), `"id":"sleep"`) {
				return nil
			}
		}
		return errors.New("the echo has not logged the request")
	})
	if err != nil {
		t.Fatal(err)
	}
}

// find returns the run's processes but the shell that stands for make (whose command line
// holds every other's).
func (r *killRun) find() []reap.Process {
	var out []reap.Process
	for _, p := range reap.Find(r.id) {
		if p.PID != r.parent.Process.Pid {
			out = append(out, p)
		}
	}
	return out
}

// pid is the pid of the run's process whose command line holds cmd, 0 if none.
func (r *killRun) pid(cmd string) int {
	for _, p := range r.find() {
		if strings.Contains(p.Command, cmd) {
			return p.PID
		}
	}
	return 0
}

// waitParent waits until the shell that stands for make has ended (killed, or the run over).
func (r *killRun) waitParent(t *testing.T) {
	t.Helper()
	select {
	case <-r.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the run did not end within 2 minutes of the kill:\n%s", list(reap.Find(r.id)))
	}
}

// waitNone polls until run has no process left or d has passed, and returns what is left.
func waitNone(run string, d time.Duration) []reap.Process {
	var left []reap.Process
	_ = poll(d, func() error {
		if left = reap.Find(run); len(left) > 0 {
			return errors.New("processes left")
		}
		return nil
	})
	return left
}

// poll calls f every 100 ms until it returns nil or d has passed; it returns f's last error.
func poll(d time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func hasCommand(ps []reap.Process, cmd string) bool {
	for _, p := range ps {
		if strings.Contains(p.Command, cmd) {
			return true
		}
	}
	return false
}

func list(ps []reap.Process) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	return b.String()
}
