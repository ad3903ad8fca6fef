package localcloud

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// procFS is /proc, where Linux tells each process's parent and peak resident set.
var procFS fs.FS = os.DirFS("/proc")

// peakRSS reads the largest peak resident set size (VmHWM, in KiB) among the direct children
// of a process: for an environment, the function's bootstrap that the Runtime Interface
// Emulator runs. It is 0 where /proc cannot tell (not Linux, process gone). It is read after
// every invocation, so the children are looked for among every process only when it does not
// know them yet (a new environment, a child gone); otherwise it reads their own entries.
type peakRSS struct {
	proc     fs.FS // /proc when nil
	parent   int   // the process whose children are known
	children []int // their process ids
}

func (r *peakRSS) read(pid int) int {
	if r.proc == nil {
		r.proc = procFS
	}
	if pid != r.parent || !r.known() {
		r.parent, r.children = pid, nil
		stats, _ := fs.Glob(r.proc, "[0-9]*/stat")
		for _, p := range stats {
			if ppid(r.proc, p) == pid {
				child, _ := strconv.Atoi(path.Dir(p))
				r.children = append(r.children, child)
			}
		}
	}
	peak := 0
	for _, c := range r.children {
		peak = max(peak, vmHWM(r.proc, strconv.Itoa(c)+"/status"))
	}
	return peak
}

// known says whether the children it knows are still the parent's (none known: no).
func (r *peakRSS) known() bool {
	for _, c := range r.children {
		if ppid(r.proc, strconv.Itoa(c)+"/stat") != r.parent {
			return false
		}
	}
	return len(r.children) > 0
}

// ppid is the parent process id in a /proc/<pid>/stat file, -1 when it cannot be read.
func ppid(proc fs.FS, statPath string) int {
	b, err := fs.ReadFile(proc, statPath)
	if err != nil {
		return -1
	}
	// The fields after the command name, which is in parentheses: state, ppid, ...
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 2 {
		return -1
	}
	n, err := strconv.Atoi(fields[1])
	if err != nil {
		return -1
	}
	return n
}

func vmHWM(proc fs.FS, statusPath string) int {
	b, err := fs.ReadFile(proc, statusPath)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kib, _ := strconv.Atoi(f[0])
				return kib
			}
		}
	}
	return 0
}
