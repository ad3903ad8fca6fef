package reap

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Variable is the environment variable that marks the processes of runs: the ids of the runs
// a process belongs to, separated by spaces, outermost first (a run started inside another
// belongs to both).
const Variable = "ONCEFLOW_RUN"

// NewRun returns a new run id, unique on this machine: the pid of its maker and random bits.
func NewRun() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b))
}

// Mark returns env with run added to Variable (where it is not already), so that a process started with it, and every
// process that one starts, belongs to run (and still to every run env already names).
func Mark(env []string, run string) []string {
	out := make([]string, 0, len(env)+1)
	var runs []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, Variable+"="); ok {
			runs = strings.Fields(v)
			continue
		}
		out = append(out, kv)
	}
	if !slices.Contains(runs, run) {
		runs = append(runs, run)
	}
	return append(out, Variable+"="+strings.Join(runs, " "))
}

// Marks returns the marks of this process as environment entries (none when it belongs to no
// run), for a child whose environment is built from nothing rather than inherited: without
// them it would escape the runs of its parent.
func Marks() []string {
	if v, ok := os.LookupEnv(Variable); ok {
		return []string{Variable + "=" + v}
	}
	return nil
}

// belongs reports whether a process with environment env (as /proc/<pid>/environ holds it:
// entries separated by NUL bytes) belongs to run.
func belongs(environ []byte, run string) bool {
	for _, kv := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, Variable+"="); ok {
			return slices.Contains(strings.Fields(v), run)
		}
	}
	return false
}
