package main

import (
	"fmt"
	"strings"
	"time"
)

// summary prints the last lines: the verdict with the counts and the time, then a line per
// package that failed or did not finish. It returns the exit status: go test's when it is not
// zero, 1 when the stream says that something failed or did not finish (or a signal stopped
// the run), else 0.
func (r *report) summary(took time.Duration) int {
	r.mu.Lock()
	status, sig := r.status, r.signal
	r.mu.Unlock()
	var ok, failed, none int
	var lines []string
	for _, path := range r.order {
		p := r.pkgs[path]
		switch p.result {
		case "pass":
			ok++
		case "skip":
			none++
		case "":
			failed++
			p.result = "fail"
			_ = p.log.Close()
			lines = append(lines, fmt.Sprintf("FAIL  %s: did not finish (go test ended first)%s  (log: %s)", path, names(" while running", p.running()), r.logPath(path)))
		default:
			failed++
			lines = append(lines, fmt.Sprintf("FAIL  %s: %s  (log: %s)", path, why(p), r.logPath(path)))
		}
	}
	verdict := "PASS"
	if failed > 0 || status != 0 || sig != nil {
		verdict = "FAIL"
	}
	fmt.Fprintf(r.w, "\n%s: %d packages in %s: %d ok, %d failed, %d without tests; tests: %d passed, %d failed, %d skipped\n",
		verdict, len(r.order), took.Round(time.Second), ok, failed, none, r.tests.passed, r.tests.failed, r.tests.skipped)
	for _, l := range lines {
		fmt.Fprintln(r.w, l)
	}
	if sig != nil {
		fmt.Fprintf(r.w, "interrupted (%s)\n", sig)
	}
	if status != 0 {
		fmt.Fprintf(r.w, "go test exited with status %d\n", status)
	}
	fmt.Fprintf(r.w, "logs (every package's whole output): %s/\n", r.dir)
	switch {
	case status != 0:
		return status
	case verdict == "FAIL":
		return 1
	}
	return 0
}

// why says what failed in a package.
func why(p *pkg) string {
	if p.failedBuild != "" {
		return "build failed (" + p.failedBuild + ")"
	}
	var failed, stopped []string
	for _, t := range p.failed {
		if t.result == "unfinished" {
			stopped = append(stopped, t.name)
		} else {
			failed = append(failed, t.name)
		}
	}
	if len(failed)+len(stopped) == 0 {
		return "failed outside its tests"
	}
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, strings.Join(failed, ", "))
	}
	if len(stopped) > 0 {
		parts = append(parts, "stopped while running "+strings.Join(stopped, ", "))
	}
	return strings.Join(parts, "; ")
}

// running returns the tests of a package that started and have not ended.
func (p *pkg) running() []string {
	var out []string
	for _, name := range p.names {
		if p.tests[name].result == "" {
			out = append(out, name)
		}
	}
	return out
}

func names(prefix string, ts []string) string {
	if len(ts) == 0 {
		return ""
	}
	return prefix + " " + strings.Join(ts, ", ")
}
