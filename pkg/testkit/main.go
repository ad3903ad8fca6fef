package testkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/testkit/emulator"
)

// Main runs the tests of m and exits with their status; call it from the package's TestMain:
//
//	func TestMain(m *testing.M) { testkit.Main(m) }
//
// A test that needs an emulator whose variable is unset (Emulator) then starts it, once for the
// test binary, and Main stops every emulator started after the last test. Each runs as a child
// that gets SIGKILL when the test binary ends however it ends, so none outlives it. Starting
// one installs the pinned emulators first, once per machine (emulator.Install), and needs Java
// 17+ and Node.js 20+ with npm. With every variable set (as `make test` sets them), Main starts
// nothing.
func Main(m *testing.M) {
	started.main.Store(true)
	code := m.Run()
	started.stop()
	os.Exit(code)
}

// startBound bounds an emulator's start: a loaded machine starts a JVM slowly (DynamoDB Local
// has taken over 30 s on two cores at a load average of 20).
const startBound = 3 * time.Minute

// started holds the emulators this test binary started.
var started emulators

type emulators struct {
	main  atomic.Bool // Main runs the tests
	mu    sync.Mutex
	logs  string // their logs' directory
	procs map[*emulator.Kind]*emulator.Process
	err   map[*emulator.Kind]error // a start that failed, not tried again
}

// start returns the URL of kind, starting it and setting variable on the first call.
func (e *emulators) start(kind *emulator.Kind, variable string) (string, error) {
	if !e.main.Load() {
		return "", fmt.Errorf("it starts only for a test binary run through testkit.Main: add `func TestMain(m *testing.M) { testkit.Main(m) }` to the package's tests, or set %s to a running emulator", variable)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.procs[kind]; p != nil {
		return p.URL, nil
	}
	if err := e.err[kind]; err != nil {
		return "", err
	}
	p, err := e.run(kind)
	if err != nil {
		if e.err == nil {
			e.err = map[*emulator.Kind]error{}
		}
		e.err[kind] = err
		return "", err
	}
	if e.procs == nil {
		e.procs = map[*emulator.Kind]*emulator.Process{}
	}
	e.procs[kind] = p
	os.Setenv(variable, p.URL) // for what the tests start: a command, another module's tests
	return p.URL, nil
}

// run installs the emulators if need be and starts kind.
func (e *emulators) run(kind *emulator.Kind) (*emulator.Process, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startBound)
	defer cancel()
	dir, err := emulator.Install(ctx)
	if err != nil {
		return nil, err
	}
	if e.logs == "" {
		if e.logs, err = os.MkdirTemp("", "testkit-emulators-"); err != nil {
			return nil, err
		}
	}
	return emulator.Start(ctx, kind, dir, filepath.Join(e.logs, kind.ID+".log"))
}

// stop stops every emulator started and removes their logs.
func (e *emulators) stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.procs {
		p.Stop()
	}
	e.procs = nil
	if e.logs != "" {
		os.RemoveAll(e.logs)
	}
}
