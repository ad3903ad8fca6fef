package localcloud

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/onceflow/onceflow/pkg/testkit/child"
)

// proc is a child process in its own process group, its output in a log file. It dies with
// this process (child.Start).
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // exit status, valid after done
}

// startProc starts cmd with its output appended to logPath, emptied first when fresh.
func startProc(name string, cmd *exec.Cmd, logPath string, fresh bool) (*proc, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if fresh {
		flags |= os.O_TRUNC
	}
	logf, err := os.OpenFile(logPath, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that stop ends what it started too; SIGKILL from the kernel
	// when this process ends, however it ends, so that a killed test or supervisor leaves none.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := child.Start(cmd, syscall.SIGKILL); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	if p == nil || p.exited() {
		return
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		<-p.done
	}
}

// readyBound is how long a started process has to become ready: a bound on a hang, never a
// wait, since waitReady returns as soon as the process is ready or has exited. A loaded 2-core
// machine (load average 20) took over 30 s to start DynamoDB Local's JVM.
const readyBound = 3 * time.Minute

// waitReady polls probe until it succeeds, the process exits or the timeout passes.
func waitReady(ctx context.Context, p *proc, timeout time.Duration, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := probe(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready: %v", p.name, p.err)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s: %w", p.name, timeout, errors.Join(err, ctx.Err()))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func dialProbe(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
}
