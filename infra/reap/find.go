package reap

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// Process is a live process of a run.
type Process struct {
	PID     int
	Parent  int    // its parent's pid
	Command string // its command line, arguments separated by spaces
}

// String is the pid and the command line, for messages.
func (p Process) String() string { return strconv.Itoa(p.PID) + " " + p.Command }

// Find returns the live processes of run other than the caller, from /proc: those whose
// environment carries run in Variable. A zombie (ended, not yet reaped) runs nothing and has
// no environment left: it is not one. Processes of other users, whose environment cannot be
// read, are not either.
func Find(run string) []Process {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []Process
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil || !belongs(env, run) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		out = append(out, Process{PID: pid, Parent: parent(dir),
			Command: string(bytes.TrimRight(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}), " "))})
	}
	return out
}

// parent reads the parent's pid from /proc/<pid>/stat: the field after the state, which
// follows the command's name in parentheses (a name that may hold spaces and parentheses).
func parent(dir string) int {
	b, _ := os.ReadFile(filepath.Join(dir, "stat"))
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(string(f[1]))
	return n
}
