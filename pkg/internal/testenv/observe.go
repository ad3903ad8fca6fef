package testenv

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// lines is a buffer of JSON lines, safe for concurrent writes.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// each decodes every line written so far.
func (l *lines) each() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	s := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		var m map[string]any
		if json.Unmarshal(s.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Logs keeps what a JSON slog logger wrote, to look at the lines a test expects.
type Logs struct{ l lines }

// NewLogs returns a JSON logger at every level, writing to the Logs returned.
func NewLogs() (*slog.Logger, *Logs) {
	logs := &Logs{}
	return slog.New(slog.NewJSONHandler(&logs.l, &slog.HandlerOptions{Level: slog.LevelDebug})), logs
}

// Lines returns the lines logged with message msg, in order.
func (g *Logs) Lines(msg string) []map[string]any {
	var out []map[string]any
	for _, m := range g.l.each() {
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// EMF keeps the Embedded Metric Format lines a metrics.EMF recorder flushed.
type EMF struct{ l lines }

// NewEMF returns an EMF recorder of namespace onceflow with dimensions, writing to the EMF
// returned.
func NewEMF(dimensions map[string]string) (*metrics.EMF, *EMF) {
	out := &EMF{}
	return metrics.NewEMF(&out.l, "onceflow", dimensions), out
}

// Count sums metric name over every line flushed so far.
func (e *EMF) Count(name string) float64 {
	var n float64
	for _, m := range e.l.each() {
		if v, ok := m[name].(float64); ok {
			n += v
		}
	}
	return n
}

// MessageDenied is the message of the one log line the engine writes for an access denial.
// The stacks' alarms quote it and docs/runbook.md tells operators to search for it: the test
// holds its words here, as a reader of the logs meets them, rather than taking them from the
// engine.
const MessageDenied = "AWS call denied: a permission is missing"

// CheckDenied checks what every port does with an access denial: at least one line
// MessageDenied, each at ERROR naming permission, the error code, the principal and the
// resource's ARN, and the EMF metric AccessDenied counting each line once. It returns the
// lines.
func CheckDenied(tb testing.TB, logs *Logs, emf *EMF, permission, code string) []map[string]any {
	tb.Helper()
	lines := logs.Lines(MessageDenied)
	if len(lines) == 0 {
		tb.Fatalf("no %q line logged", MessageDenied)
	}
	for _, l := range lines {
		if l["level"] != "ERROR" || l["permission"] != permission || l["errorCode"] != code || l["principal"] != fault.Principal ||
			!strings.HasPrefix(fmt.Sprint(l["resource"]), "arn:aws:") {
			tb.Errorf("denial logged as %v; want at ERROR, permission %s, code %s, the principal and the resource's ARN", l, permission, code)
		}
	}
	if n := emf.Count(metrics.AccessDenied); n != float64(len(lines)) {
		tb.Errorf("EMF %s = %v; want %d, one per denial logged", metrics.AccessDenied, n, len(lines))
	}
	return lines
}
