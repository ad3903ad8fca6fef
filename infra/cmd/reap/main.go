// Command reap runs a command as a run (package infra/reap) and ends every process of the run
// when the command ends, however it ends:
//
//	reap [-run ID] [-grace 10s] [-emulators LOGS] [-rm PATH]... -- COMMAND [ARG...]
//
// The command runs with the environment marked with the run: a new one, or ID, which a shell
// that started processes of the run before passes. With -emulators, reap first starts the
// pinned emulators (pkg/testkit/emulator) on free loopback ports, their logs in LOGS, and the
// command sees DYNAMODB_ENDPOINT, SQS_ENDPOINT and KINESIS_ENDPOINT (infra/emulators.sh is
// this); they are stopped when the command ends. reap sweeps the run (SIGTERM to every
// process of it, SIGKILL after the grace) when the command exits; when reap gets SIGINT, SIGTERM or SIGHUP, which it passes on
// to the command before it waits for it at most the grace; and when reap's parent ends (make
// killed with SIGKILL: the parent-death signal is SIGTERM). A watchdog process sweeps the run
// if reap itself is killed with SIGKILL. Then reap removes each -rm path and exits with the
// command's status (128+n after signal n, as a shell does). It names on standard error the
// processes that outlived the command, other than its own children.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/onceflow/onceflow/infra/reap"
	"github.com/onceflow/onceflow/pkg/testkit/child"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == watchArg {
		os.Exit(watch(os.Args[2], os.Args[3]))
	}
	os.Exit(run(os.Args[1:]))
}

type paths []string

func (p *paths) String() string     { return strings.Join(*p, " ") }
func (p *paths) Set(s string) error { *p = append(*p, s); return nil }

func run(args []string) int {
	fs := flag.NewFlagSet("reap", flag.ContinueOnError)
	id := fs.String("run", "", "the run's id (default: a new one)")
	grace := fs.Duration("grace", 10*time.Second, "how long a process has to end after SIGTERM before SIGKILL")
	logs := fs.String("emulators", "", "start the pinned emulators for the command, their logs in this directory")
	var remove paths
	fs.Var(&remove, "rm", "a path to remove after the sweep (repeatable)")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: reap [-run ID] [-grace 10s] [-emulators LOGS] [-rm PATH]... -- COMMAND [ARG...]")
		return 2
	}
	if *id == "" {
		*id = reap.NewRun()
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if err := child.DieWithParent(syscall.SIGTERM); err != nil {
		fmt.Fprintln(os.Stderr, "reap:", err)
	}
	g := &guard{run: *id, grace: *grace}
	status := g.withEmulators(*logs, fs.Args(), signals)
	g.sweep()
	for _, p := range remove {
		if err := os.RemoveAll(p); err != nil {
			fmt.Fprintln(os.Stderr, "reap:", err)
		}
	}
	return status
}

// guard runs a command and sweeps its run.
type guard struct {
	run   string
	grace time.Duration
	dog   *watchdog
	env   []string // added to the command's environment
}

// withEmulators runs the command, with the pinned emulators started for it first when logs
// names their logs' directory (and stopped after it). It returns the command's exit status, or
// 1 when the emulators could not start.
func (g *guard) withEmulators(logs string, argv []string, signals <-chan os.Signal) int {
	if logs == "" {
		return g.command(argv, signals)
	}
	// The emulators inherit reap's environment: marked with the run, they are swept with it.
	for _, kv := range reap.Mark(os.Environ(), g.run) {
		if v, ok := strings.CutPrefix(kv, reap.Variable+"="); ok {
			os.Setenv(reap.Variable, v)
		}
	}
	s, err := startEmulators(logs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "emulators:", err)
		return 1
	}
	defer s.stop()
	fmt.Fprintln(os.Stderr, s.said)
	g.env = s.env
	return g.command(argv, signals)
}

// command runs argv marked with the run until it exits, passing on the signals that come in;
// after a signal it waits at most the grace. It returns the exit status.
func (g *guard) command(argv []string, signals <-chan os.Signal) int {
	var err error
	if g.dog, err = startWatchdog(g.run, g.grace); err != nil {
		fmt.Fprintln(os.Stderr, "reap: no watchdog (the run is swept all the same unless reap is killed):", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(reap.Mark(os.Environ(), g.run), g.env...)
	if err := child.Start(cmd, syscall.SIGTERM); err != nil {
		fmt.Fprintln(os.Stderr, "reap:", err)
		return 127
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var got os.Signal
	var deadline <-chan time.Time
	for {
		select {
		case err := <-exited:
			return status(err, got)
		case s := <-signals:
			if got == nil {
				got, deadline = s, time.After(g.grace)
			}
			_ = cmd.Process.Signal(s)
		case <-deadline:
			fmt.Fprintf(os.Stderr, "reap: %s still runs %s after %s: sweeping\n", argv[0], g.grace, got)
			return status(nil, got)
		}
	}
}

// status is a shell's exit status for a command that ended with err, after reap got sig.
func status(err error, sig os.Signal) int {
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() >= 0 && (sig == nil || exit.ExitCode() != 0):
		return exit.ExitCode()
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
	case err != nil:
		return 1
	}
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 0
}

// sweep ends every process of the run, its watchdog told first that it need not, and names
// those that outlived the command other than reap's own children.
func (g *guard) sweep() {
	g.dog.stand()
	found, left := reap.Sweep(g.run, g.grace)
	var stray []string
	for _, p := range found {
		if p.Parent != os.Getpid() {
			stray = append(stray, p.String())
		}
	}
	if len(stray) > 0 {
		fmt.Fprintf(os.Stderr, "reap: ended %d processes that outlived the command: %s\n", len(stray), strings.Join(stray, "; "))
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "reap: %d processes still run after SIGKILL: %v\n", len(left), left)
	}
}
