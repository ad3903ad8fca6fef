package localcloud

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// childPeakRSS returns the largest peak resident set size (VmHWM, in KiB) among the direct
// children of pid: for an environment, the function's bootstrap that the Runtime Interface
// Emulator runs. It returns 0 where /proc cannot tell (not Linux, process gone).
func childPeakRSS(pid int) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	peak := 0
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses: state, ppid, ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		peak = max(peak, vmHWM(filepath.Join(filepath.Dir(path), "status")))
	}
	return peak
}

func vmHWM(statusPath string) int {
	b, err := os.ReadFile(statusPath)
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
