package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// event is a line of `go test -json`: cmd/test2json's TestEvent, and the go command's own
// events of a build (build-output, build-fail).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // of a build-output or build-fail event
	FailedBuild string // of a package's fail event: the build that failed
}

// report follows the stream and prints what a reader needs from it.
type report struct {
	w      io.Writer
	dir    string            // the packages' logs
	module string            // the module's path, left out of log file names
	pkgs   map[string]*pkg   // by import path
	order  []string          // import paths, in the order they started
	builds map[string]string // compiler output by the build's import path
	tests  struct{ passed, failed, skipped int }

	mu     sync.Mutex // guards status and signal, set from the signal handler
	status int        // go test's exit status, once it has exited
	signal os.Signal  // the first signal passed on, if any
}

// pkg is a test package as the stream tells it.
type pkg struct {
	path        string
	log         *os.File
	tests       map[string]*test
	names       []string // tests in the order they started
	failed      []*test  // failed tests, in the order they failed; then those left running
	own         []string // output outside any test (a package's FAIL line, a TestMain's)
	result      string   // pass, fail or skip once it has ended
	elapsed     float64
	failedBuild string
}

// test is a test, its output kept until it passes or is skipped.
type test struct {
	name    string
	lines   []string
	result  string
	elapsed float64
}

func newReport(w io.Writer, dir, module string) (*report, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range old { // a log of an earlier run would read as this one's
		_ = os.Remove(f)
	}
	return &report{w: w, dir: dir, module: module, pkgs: map[string]*pkg{}, builds: map[string]string{}}, nil
}

// read follows the stream to its end. A line that is not an event is printed as it is.
func (r *report) read(in io.Reader) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(r.w, sc.Text())
			continue
		}
		r.handle(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(r.w, "testreport: reading go test's output: %v\n", err)
	}
}

func (r *report) handle(e event) {
	switch e.Action {
	case "build-output":
		r.builds[e.ImportPath] += e.Output
		return
	case "build-fail":
		return
	}
	p := r.pkg(e.Package)
	if e.Action == "output" {
		_, _ = io.WriteString(p.log, e.Output)
	}
	if e.Test != "" {
		r.testEvent(p, p.test(e.Test), e)
		return
	}
	switch e.Action {
	case "output":
		p.own = append(p.own, e.Output)
	case "pass", "fail", "skip":
		p.result, p.elapsed, p.failedBuild = e.Action, e.Elapsed, e.FailedBuild
		r.ended(p)
	}
}

func (r *report) testEvent(p *pkg, t *test, e event) {
	switch e.Action {
	case "output":
		if t.result == "" || t.result == "fail" {
			t.lines = append(t.lines, e.Output)
		}
	case "pass", "skip":
		t.result, t.lines = e.Action, nil
		if e.Action == "pass" {
			r.tests.passed++
		} else {
			r.tests.skipped++
		}
	case "fail":
		t.result, t.elapsed = e.Action, e.Elapsed
		p.failed = append(p.failed, t)
		r.tests.failed++
	}
}

// pkg returns the package of an import path, its log opened when it first appears.
func (r *report) pkg(path string) *pkg {
	if p, ok := r.pkgs[path]; ok {
		return p
	}
	p := &pkg{path: path, tests: map[string]*test{}}
	f, err := os.Create(r.logPath(path))
	if err != nil {
		fmt.Fprintf(r.w, "testreport: %v\n", err)
		f, _ = os.Open(os.DevNull)
	}
	p.log = f
	r.pkgs[path] = p
	r.order = append(r.order, path)
	return p
}

func (p *pkg) test(name string) *test {
	t, ok := p.tests[name]
	if !ok {
		t = &test{name: name}
		p.tests[name] = t
		p.names = append(p.names, name)
	}
	return t
}

// logPath is the log file of a package: its import path after the module's, "/" made "_"
// (the module's own package: the module's last element).
func (r *report) logPath(path string) string {
	name := strings.TrimPrefix(strings.TrimPrefix(path, r.module), "/")
	if name == "" {
		name = filepath.Base(path)
	}
	return filepath.Join(r.dir, strings.ReplaceAll(name, "/", "_")+".log")
}

// ended prints a package's line, and its failures after it. A test still running when its
// package failed was stopped: a timeout, a panic elsewhere, its binary killed.
func (r *report) ended(p *pkg) {
	_ = p.log.Close()
	if p.result == "fail" {
		for _, name := range p.names {
			if t := p.tests[name]; t.result == "" {
				t.result = "unfinished"
				p.failed = append(p.failed, t)
			}
		}
	}
	switch p.result {
	case "skip": // no test files, or no tests to run: counted in the summary
	case "pass":
		fmt.Fprintf(r.w, "ok    %s  %.1fs\n", p.path, p.elapsed)
	default:
		fmt.Fprintf(r.w, "FAIL  %s  %.1fs  (log: %s)\n", p.path, p.elapsed, r.logPath(p.path))
		r.failures(p)
	}
}

// interrupted records the first signal passed on to go test.
func (r *report) interrupted(s os.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.signal == nil {
		r.signal = s
	}
}

// exited records go test's exit status.
func (r *report) exited(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = status
}

// modulePath is the module path a go.mod declares, "" without one.
func modulePath(gomod string) string {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	return ""
}
