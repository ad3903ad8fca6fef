package localcloud_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
)

func TestParseLogLine_keeps_the_functions_lines_and_drops_the_emulators(t *testing.T) {
	cases := []struct {
		name, line string
		keep       bool
		formatted  string
	}{
		{"a record with Lambda's and Powertools' keys, the per-invocation ones left out",
			`{"timestamp":"2026-11-30T21:15:49.230070471Z","level":"INFO","message":"message applied","service":"onceflow","consumer":"ledger","messageId":"m-1","idempotency_key":"ledger#e-1","outcome":"applied","function_name":"LedgerFunction","function_request_id":"r-1","cold_start":true,"xray_trace_id":"1-5759e988-bd862e3fe1be46a994272793"}`,
			true, `21:15:49.230 INFO  LedgerFunction-1  message applied consumer=ledger messageId=m-1 outcome=applied xray_trace_id=1-5759e988-bd862e3fe1be46a994272793`},
		{"a JSON record, fields in the order written, function and requestId left out",
			`{"time":"2026-11-30T21:15:49.230070471Z","level":"INFO","msg":"message rejected","function":"ledger","messageId":"m-1","outcome":"rejected","reason":"insufficient funds","durationMs":8.5,"requestId":"r-1"}`,
			true, `21:15:49.230 INFO  LedgerFunction-1  message rejected messageId=m-1 outcome=rejected reason="insufficient funds" durationMs=8.5`},
		{"the emulator's own line", `30 Nov 2026 21:15:49,136 [INFO] (rapid) INIT START(type: on-demand, phase: init)`, false, ""},
		{"the emulator's START line", `START RequestId: 18221dad Version: $LATEST`, false, ""},
		{"the emulator's REPORT line", "REPORT RequestId: 18221dad\tDuration: 4.09 ms", false, ""},
		{"an EMF metric record", `{"Applied":3,"Consumer":"ledger","_aws":{"Timestamp":1}}`, false, ""},
		{"a blank line", "  ", false, ""},
		{"any other text the function printed", `panic: boom`, true, "panic: boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, ok := localcloud.ParseLogLine("LedgerFunction-1", c.line)
			if ok != c.keep {
				t.Fatalf("kept = %v, want %v", ok, c.keep)
			}
			if !ok {
				return
			}
			if got := l.Format(); !strings.HasSuffix(got, c.formatted) || (l.Text == "" && got != c.formatted) {
				t.Errorf("Format() = %q\nwant      %q", got, c.formatted)
			}
		})
	}
}

func TestReadLogs_merges_a_functions_environments_in_time_order(t *testing.T) {
	state := t.TempDir()
	logs := filepath.Join(state, "logs")
	write := func(name, text string) {
		if err := os.MkdirAll(logs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(logs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Fn-1.log", `{"time":"2026-01-01T00:00:01Z","level":"INFO","msg":"one"}
{"time":"2026-01-01T00:00:03Z","level":"INFO","msg":"three"}
`)
	write("Fn-2.log", "SDK warning before any record\n"+`{"time":"2026-01-01T00:00:02Z","level":"WARN","msg":"two"}
30 Nov 2026 21:15:49,136 [INFO] (rapid) exec bootstrap
`)
	write("FnOther-1.log", `{"time":"2026-01-01T00:00:00Z","level":"INFO","msg":"other function"}`+"\n")
	write("fauxqs.log", "{}\n")
	lines, err := localcloud.ReadLogs(state, "Fn")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, l.Env+":"+l.Msg+l.Text)
	}
	want := "Fn-1:one Fn-2:SDK warning before any record Fn-2:two Fn-1:three"
	if strings.Join(got, " ") != want {
		t.Errorf("lines = %q\nwant    %q", strings.Join(got, " "), want)
	}
	if ids := localcloud.LogFunctions(state); strings.Join(ids, ",") != "Fn,FnOther" {
		t.Errorf("LogFunctions = %v, want [Fn FnOther]", ids)
	}
}

// Every line make logs prints starts with a time: a text line (a panic's stack, the SDK's own
// plain-text warning) the time of the record before it, or of the first after it at the top.
func TestReadLogs_gives_every_line_a_timestamp(t *testing.T) {
	state := t.TempDir()
	if err := os.MkdirAll(filepath.Join(state, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "text before any record\n" +
		`{"timestamp":"2026-01-01T10:00:01.5Z","level":"INFO","message":"one"}` + "\n" +
		"panic: boom\n\tgoroutine 1 [running]:\n" +
		`{"timestamp":"2026-01-01T10:00:02.25Z","level":"WARN","message":"two"}` + "\n"
	if err := os.WriteFile(filepath.Join(state, "logs", "Fn-1.log"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, err := localcloud.ReadLogs(state, "Fn")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, l.Format())
	}
	want := []string{
		"10:00:01.500       Fn-1  text before any record",
		"10:00:01.500 INFO  Fn-1  one",
		"10:00:01.500       Fn-1  panic: boom",
		"10:00:01.500       Fn-1  \tgoroutine 1 [running]:",
		"10:00:02.250 WARN  Fn-1  two",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A file with no record at all still gives its lines a time: the file's last change.
func TestReadLogs_text_without_any_record_takes_the_files_time(t *testing.T) {
	state := t.TempDir()
	path := filepath.Join(state, "logs", "Fn-1.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("fatal error: out of memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 9, 30, 0, 0, time.Local)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
	lines, err := localcloud.ReadLogs(state, "Fn")
	if err != nil || len(lines) != 1 {
		t.Fatalf("ReadLogs = %v, %v; want one line", lines, err)
	}
	if got := lines[0].Format(); !strings.HasPrefix(got, at.UTC().Format("15:04:05.000")+" ") {
		t.Errorf("line = %q, want it to start with %s", got, at.UTC().Format("15:04:05.000"))
	}
}
