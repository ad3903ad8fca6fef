package localcloud

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LogLine is one line a function wrote to its log: a JSON record of its logger (Time from
// "timestamp", Level, Msg from "message", and the other fields in Attrs, in the order written) or, for anything else it printed
// (a panic's stack, say), the raw Text.
type LogLine struct {
	Env   string // execution environment, <LogicalId>-<n>
	Time  time.Time
	Level string
	Msg   string
	Attrs []LogAttr
	Text  string
}

// LogAttr is one field of a JSON log record, its value as written (strings unquoted).
type LogAttr struct{ Key, Value string }

// Attr returns the value of field key, or "".
func (l LogLine) Attr(key string) string {
	for _, a := range l.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

// emulatorLine matches the Runtime Interface Emulator's own lines, not the function's.
var emulatorLine = regexp.MustCompile(`^(\d{2} \w{3} \d{4} [\d:,]+ \[\w+\] \(rapid\)|(START|END|REPORT) RequestId: )`)

// ParseLogLine parses one line of an environment's log file. It reports false for the
// emulator's own lines, CloudWatch EMF metric records and blank lines.
func ParseLogLine(env, line string) (LogLine, bool) {
	l := LogLine{Env: env}
	line = strings.TrimRight(line, "\r\n")
	if strings.TrimSpace(line) == "" || emulatorLine.MatchString(line) {
		return l, false
	}
	if !strings.HasPrefix(line, "{") {
		l.Text = line
		return l, true
	}
	attrs, err := orderedFields([]byte(line))
	if err != nil {
		l.Text = line
		return l, true
	}
	for _, a := range attrs {
		switch a.Key {
		case "_aws":
			return l, false // an EMF metric record
		case "timestamp", "time": // Lambda's and Powertools' key, slog's default
			l.Time, _ = time.Parse(time.RFC3339Nano, a.Value)
		case "level":
			l.Level = a.Value
		case "message", "msg":
			l.Msg = a.Value
		default:
			l.Attrs = append(l.Attrs, a)
		}
	}
	return l, true
}

// orderedFields decodes a JSON object's top-level fields in the order they appear.
func orderedFields(b []byte) ([]LogAttr, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out []LogAttr
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		out = append(out, LogAttr{Key: key, Value: s})
	}
	return out, nil
}

// skipped are fields Format leaves out: the same on every line of a function, or long ids
// (xray_trace_id stays: it is what follows one request from the API to its consumers).
var skipped = map[string]bool{"function": true, "requestId": true, "service": true, "function_name": true,
	"function_request_id": true, "cold_start": true, "idempotency_key": true}

// Format renders the line for a terminal: time (UTC), level, environment, message, then
// key=value; a text line has the time it was given and no level.
func (l LogLine) Format() string {
	at := l.Time.UTC().Format("15:04:05.000")
	if l.Time.IsZero() {
		at = "--:--:--.---"
	}
	if l.Text != "" {
		return fmt.Sprintf("%s %-5s %s  %s", at, "", l.Env, l.Text)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-5s %s  %s", at, l.Level, l.Env, l.Msg)
	for _, a := range l.Attrs {
		if skipped[a.Key] {
			continue
		}
		v := a.Value
		if strings.ContainsAny(v, " \t\"=") || v == "" {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, v)
	}
	return b.String()
}

// LogFunctions returns the logical ids that have environment logs in stateDir/logs.
func LogFunctions(stateDir string) []string {
	files, _ := filepath.Glob(filepath.Join(stateDir, "logs", "*-*.log"))
	var ids []string
	for _, f := range files {
		id, n, ok := envOfLog(f)
		if ok && n > 0 && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// envOfLog splits .../<LogicalId>-<n>.log.
func envOfLog(path string) (id string, n int, ok bool) {
	base := strings.TrimSuffix(filepath.Base(path), ".log")
	i := strings.LastIndexByte(base, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(base[i+1:])
	return base[:i], n, err == nil
}

// LogFiles returns the log files of function's environments, by environment name.
func LogFiles(stateDir, function string) map[string]string {
	files, _ := filepath.Glob(filepath.Join(stateDir, "logs", function+"-*.log"))
	out := map[string]string{}
	for _, f := range files {
		if id, _, ok := envOfLog(f); ok && id == function {
			out[strings.TrimSuffix(filepath.Base(f), ".log")] = f
		}
	}
	return out
}

// ReadLogs returns the lines function's environments logged in this run, in time order (a
// text line keeps the time of the record before it).
func ReadLogs(stateDir, function string) ([]LogLine, error) {
	var all []LogLine
	for env, path := range LogFiles(stateDir, function) {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read logs: %w", err)
		}
		var written time.Time
		if st, err := f.Stat(); err == nil {
			written = st.ModTime()
		}
		lines, err := ParseLog(env, f, time.Time{}, written)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read logs %s: %w", path, err)
		}
		all = append(all, lines...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Time.Before(all[j].Time) })
	return all, nil
}

// ParseLog parses the lines of an environment's log read from r. A text line takes the time
// of the record before it (before, for lines ahead of r's first record), else of the first
// record after it, else fallback.
func ParseLog(env string, r io.Reader, before, fallback time.Time) ([]LogLine, error) {
	var out []LogLine
	last := before
	pending := 0 // text lines still without a time
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		l, ok := ParseLogLine(env, sc.Text())
		if !ok {
			continue
		}
		if l.Time.IsZero() {
			l.Time = last
		} else {
			for i := len(out) - pending; i < len(out); i++ {
				out[i].Time = l.Time
			}
			pending = 0
		}
		if l.Time.IsZero() {
			pending++
		}
		last = l.Time
		out = append(out, l)
	}
	for i := len(out) - pending; i < len(out); i++ {
		out[i].Time = fallback
	}
	return out, sc.Err()
}
