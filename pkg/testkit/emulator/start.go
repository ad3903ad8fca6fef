package emulator

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/onceflow/onceflow/pkg/testkit/child"
)

// Process is an emulator that Start started.
type Process struct {
	Kind *Kind
	URL  string // http://127.0.0.1:<port>
	Log  string // the file its output goes to

	cmd     *exec.Cmd
	scratch string        // its working directory, removed by Stop
	exited  chan struct{} // closed when it has exited
}

// Start starts k on a free loopback port from the packages Install put in dir, as a child that
// gets SIGKILL when this process ends however it ends (package child), its output appended to
// the file log. It returns once the emulator answers, or an error with the log's last lines
// when it exits first or ctx ends; the process is stopped then.
func Start(ctx context.Context, k *Kind, dir, log string) (*Process, error) {
	if err := k.Runnable(); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", k.Name, err)
	}
	out, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", k.Name, err)
	}
	defer out.Close() // the child has its own descriptor
	p := &Process{Kind: k, URL: "http://127.0.0.1:" + strconv.Itoa(port), Log: log, exited: make(chan struct{})}
	if p.scratch, err = os.MkdirTemp("", "emulator-"); err != nil {
		return nil, fmt.Errorf("start %s: %w", k.Name, err)
	}
	p.cmd = k.Command(dir, port)
	p.cmd.Dir, p.cmd.Stdout, p.cmd.Stderr = p.scratch, out, out
	if err := child.Start(p.cmd, syscall.SIGKILL); err != nil {
		os.RemoveAll(p.scratch)
		return nil, fmt.Errorf("start %s: %w", k.Name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	if err := p.wait(ctx); err != nil {
		p.Stop()
		return nil, fmt.Errorf("start %s: %w\n%s (last lines):\n%s", k.Name, err, log, tail(log))
	}
	return p, nil
}

// wait returns nil once the emulator answers; an error once it has exited or ctx ended.
func (p *Process) wait(ctx context.Context) error {
	for {
		probe, cancel := context.WithTimeout(ctx, time.Second)
		err := p.Kind.Ready(probe, p.URL)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("it exited before it answered (%v)", p.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("it did not answer: %w (last probe: %v)", context.Cause(ctx), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop ends the emulator (SIGTERM, SIGKILL after 5 s), waits until it has exited and removes
// its working directory. It may be called more than once.
func (p *Process) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	os.RemoveAll(p.scratch)
}

// tail returns the last lines of the file at path (at most 2 KB).
func tail(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return []byte(err.Error())
	}
	if len(b) > 2048 {
		b = b[len(b)-2048:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return b
}
