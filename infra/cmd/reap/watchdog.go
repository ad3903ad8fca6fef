package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/onceflow/onceflow/infra/reap"
)

// watchArg starts reap as the watchdog of a run: reap -watch RUN GRACE.
const watchArg = "-watch"

// done is what reap writes to its watchdog when it sweeps the run itself.
const done = "done\n"

// watchdog is a child of reap that sweeps the run when reap ends without saying done: killed
// with SIGKILL, its end of the pipe closes.
type watchdog struct {
	cmd  *exec.Cmd
	pipe io.WriteCloser
}

func startWatchdog(run string, grace time.Duration) (*watchdog, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, watchArg, run, grace.String())
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Env = reap.Mark(os.Environ(), run)
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &watchdog{cmd: cmd, pipe: pipe}, nil
}

// stand tells the watchdog that reap sweeps the run itself, and waits until it has ended.
func (w *watchdog) stand() {
	if w == nil {
		return
	}
	_, _ = io.WriteString(w.pipe, done)
	_ = w.pipe.Close()
	_ = w.cmd.Wait()
}

// watch waits until reap says done or ends without saying it; then it sweeps the run. It
// ignores SIGINT and SIGHUP, which a terminal sends to reap's whole process group.
func watch(run, grace string) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
	d, err := time.ParseDuration(grace)
	if err != nil {
		d = 10 * time.Second
	}
	said, _ := io.ReadAll(os.Stdin)
	if string(said) == done {
		return 0
	}
	found, left := reap.Sweep(run, d)
	if len(found) > 0 {
		fmt.Fprintf(os.Stderr, "reap: its supervisor gone, ended %d processes of run %s: %s\n", len(found), run, strings.Join(names(found), "; "))
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "reap: %d processes still run after SIGKILL: %v\n", len(left), left)
		return 1
	}
	return 0
}

func names(ps []reap.Process) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}
