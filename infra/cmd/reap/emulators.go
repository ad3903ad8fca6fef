package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/emulator"
)

// emulatorsBound bounds the emulators' start: a loaded machine starts a JVM slowly (DynamoDB
// Local took over 30 s at a load average of 20 on 2 cores).
const emulatorsBound = 3 * time.Minute

// emulators are the pinned emulators reap starts with -emulators, each with the variable the
// command finds its URL in.
var emulators = []struct {
	variable string
	kind     *emulator.Kind
}{
	{testkit.EndpointVariable, emulator.DynamoDB},
	{testkit.SQSEndpointVariable, emulator.SQS},
	{testkit.KinesisEndpointVariable, emulator.Kinesis},
}

// started are the emulators reap started, and what the command is told of them.
type started struct {
	procs []*emulator.Process
	env   []string // VARIABLE=URL, for the command's environment
	said  string   // emulators: DynamoDB Local at URL, ...
}

// startEmulators installs the pinned emulators if need be and starts each on a free loopback
// port, at once, as children of reap that die with it (in its environment, so marked with the
// run), each logging to logs/<id>.log. On an error every emulator started is stopped.
func startEmulators(logs string) (*started, error) {
	ctx, cancel := context.WithTimeout(context.Background(), emulatorsBound)
	defer cancel()
	dir, err := emulator.Install(ctx)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	procs := make([]*emulator.Process, len(emulators))
	errs := make([]error, len(emulators))
	var wg sync.WaitGroup
	for i, e := range emulators {
		wg.Go(func() { procs[i], errs[i] = emulator.Start(ctx, e.kind, dir, filepath.Join(logs, e.kind.ID+".log")) })
	}
	wg.Wait()
	s := &started{}
	var names []string
	for i, p := range procs {
		if p != nil {
			s.procs = append(s.procs, p)
			s.env = append(s.env, emulators[i].variable+"="+p.URL)
			names = append(names, p.Kind.Name+" at "+p.URL)
		}
	}
	if err := errors.Join(errs...); err != nil {
		s.stop()
		return nil, err
	}
	s.said = "emulators: " + strings.Join(names, ", ")
	return s, nil
}

// stop stops the emulators.
func (s *started) stop() {
	for _, p := range s.procs {
		p.Stop()
	}
}
