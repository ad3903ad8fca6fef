package main

import (
	"fmt"
	"regexp"
	"strings"
)

// How much of a failure is printed; the log has the rest.
const (
	maxOwn   = 200 // a failed test's own lines
	tailRest = 15  // the last lines of the rest of its output
	maxBuild = 100 // a build failure's compiler output
	maxPkg   = 60  // a package's output outside its tests
)

// failures prints what failed in a package that failed: the compiler's output if its build
// failed, each failed (or stopped) test, and its own output when no test explains the failure.
func (r *report) failures(p *pkg) {
	if p.failedBuild != "" {
		r.block("build failed:", strings.SplitAfter(r.builds[p.failedBuild], "\n"), maxBuild)
	}
	for _, t := range p.failed {
		r.testFailure(p, t)
	}
	if p.failedBuild == "" && len(p.failed) == 0 {
		r.block("it failed outside its tests; its output:", p.own, maxPkg)
	}
}

func (r *report) block(title string, lines []string, limit int) {
	fmt.Fprintf(r.w, "    %s\n", title)
	lines = nonEmpty(lines)
	for i, l := range lines {
		if i == limit {
			fmt.Fprintf(r.w, "    … %d more lines in the log\n", len(lines)-limit)
			break
		}
		fmt.Fprintf(r.w, "    %s", l)
	}
}

// testFailure prints a failed test: its FAIL line, then its own lines (what its test files
// wrote, a panic, a timeout), then the last lines of the rest of its output (the logs of the
// code under test), with how many more the log has.
func (r *report) testFailure(p *pkg, t *test) {
	own, rest, header := split(t.lines)
	switch {
	case header != "":
		fmt.Fprint(r.w, header)
	case t.result == "unfinished":
		fmt.Fprintf(r.w, "--- FAIL: %s (did not finish: its package failed while it ran)\n", t.name)
	default:
		fmt.Fprintf(r.w, "--- FAIL: %s (%.2fs)\n", t.name, t.elapsed)
	}
	for i, l := range own {
		if i == maxOwn {
			fmt.Fprintf(r.w, "    … %d more of its own lines in the log\n", len(own)-maxOwn)
			break
		}
		fmt.Fprint(r.w, l)
	}
	if len(rest) == 0 {
		return
	}
	if len(rest) > tailRest {
		fmt.Fprintf(r.w, "    … its other output: %d lines in %s; the last %d:\n", len(rest), r.logPath(p.path), tailRest)
		rest = rest[len(rest)-tailRest:]
	} else {
		fmt.Fprintf(r.w, "    … its other output:\n")
	}
	for _, l := range rest {
		fmt.Fprint(r.w, l)
	}
}

var (
	// ownLine is a line a test file wrote: t.Error, t.Fatal, t.Log from a _test.go file.
	ownLine = regexp.MustCompile(`^(\s*)[\w.\-]+_test\.go:\d+: `)
	// panicLine starts a panic's message and its goroutine's stack (two blocks, each ended by a
	// blank line); timeoutLine starts a timeout's message and the tests it names (one block:
	// the stacks after it are every goroutine's); killedLine is go test's word on a binary
	// that a signal ended.
	panicLine   = regexp.MustCompile(`^(panic: |fatal error: )`)
	timeoutLine = regexp.MustCompile(`^panic: test timed out`)
	killedLine  = regexp.MustCompile(`^signal: `)
	// header is the test's own FAIL line.
	header = regexp.MustCompile(`^\s*--- FAIL: `)
	// noise is the runner's bookkeeping.
	noise = regexp.MustCompile(`^\s*=== (RUN|PAUSE|CONT|NAME) `)
)

// split sorts a test's lines into its own (with the lines that continue one: more indented;
// a panic's stack; the tests a timeout names), the rest, and its FAIL line.
func split(lines []string) (own, rest []string, head string) {
	cont := -1  // the indentation a continuing line exceeds; -1 outside an own line
	blocks := 0 // blocks of a panic or timeout still to keep, each ended by a blank line
	for _, l := range lines {
		blank := strings.TrimSpace(l) == ""
		switch {
		case blocks > 0:
			own = append(own, l)
			if blank {
				blocks--
			}
		case header.MatchString(l) && head == "":
			head, cont = l, -1
		case timeoutLine.MatchString(l):
			own, cont, blocks = append(own, l), -1, 1
		case panicLine.MatchString(l):
			own, cont, blocks = append(own, l), -1, 2
		case killedLine.MatchString(l):
			own, cont = append(own, l), -1
		case noise.MatchString(l):
			cont = -1
		case ownLine.MatchString(l):
			own, cont = append(own, l), len(ownLine.FindStringSubmatch(l)[1])
		case cont >= 0 && indent(l) > cont && !blank:
			own = append(own, l)
		default:
			rest, cont = append(rest, l), -1
		}
	}
	return own, rest, head
}

func indent(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

func nonEmpty(lines []string) []string {
	out := lines[:0:0]
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
