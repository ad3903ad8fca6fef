// Command testreport runs `go test -json` and reports it for a reader who wants the failures:
//
//	testreport [-logs .local/test-logs] -- go test -json [flags] [packages]
//
// It prints a line per package as go test reports it (ok, FAIL, or no test files). After a
// failed package's line come its failures: each failed test's own lines first (those its test
// files wrote: the assertions, a panic, a timeout), then the last lines of the rest of its
// output; a build failure's compiler output; a package's own output when it failed outside a
// test. Every package's whole output, passing tests' logs included, goes to a file of its own
// under -logs. It ends with a summary: packages and tests passed and failed, the time, and
// where each failure's log is.
//
// Its exit status is non-zero when go test's is, and also whenever the stream says that
// something failed or did not finish (a failed test or package, a build failure, a panic, a
// timeout, a test binary killed, go test itself ended before every package did). SIGINT,
// SIGTERM and SIGHUP are passed on to go test, whose stream is read to its end: the summary
// still comes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout))
}

// run runs testreport with args, reporting to stdout; extra are more arguments of the command
// (tests give a fake go test its input this way).
func run(args []string, stdout io.Writer, extra ...string) int {
	fs := flag.NewFlagSet("testreport", flag.ContinueOnError)
	logs := fs.String("logs", ".local/test-logs", "directory of the packages' logs (its *.log files are replaced)")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: testreport [-logs DIR] -- go test -json [flags] [packages]")
		return 2
	}
	r, err := newReport(stdout, *logs, modulePath("go.mod"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		return 2
	}
	start := time.Now()
	cmd := exec.Command(fs.Arg(0), append(fs.Args()[1:], extra...)...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		return 2
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		return 2
	}
	go func() {
		for s := range signals {
			r.interrupted(s)
			_ = cmd.Process.Signal(s)
		}
	}()
	r.read(out)
	r.exited(exitStatus(cmd.Wait()))
	return r.summary(time.Since(start))
}

// exitStatus is a command's exit status as a shell gives it (128+n after signal n).
func exitStatus(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}
