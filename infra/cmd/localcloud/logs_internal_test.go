package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// make logs FOLLOW=1 prints what every environment appended since the last look merged in
// time order, each line with a time (a text line takes its environment's last record's).
func TestFollowLogs_prints_new_lines_of_every_environment_in_time_order_with_a_time(t *testing.T) {
	state := t.TempDir()
	logs := filepath.Join(state, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	old := `{"timestamp":"2026-01-01T10:00:00Z","level":"INFO","message":"before"}` + "\n"
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(logs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Fn-1.log", old)
	write("Fn-2.log", old)
	offsets := sizes(map[string]string{"Fn-1": filepath.Join(logs, "Fn-1.log"), "Fn-2": filepath.Join(logs, "Fn-2.log")})
	write("Fn-1.log", old+`{"timestamp":"2026-01-01T10:00:02Z","level":"INFO","message":"b"}`+"\n"+
		"panic: boom\n"+`{"timestamp":"2026-01-01T10:00:04Z","level":"INFO","message":"d"}`+"\n")
	write("Fn-2.log", old+`{"timestamp":"2026-01-01T10:00:01Z","level":"INFO","message":"a"}`+"\n"+
		`{"timestamp":"2026-01-01T10:00:03Z","level":"WARN","message":"c"}`+"\n"+`{"timestamp":"2026-01-01T10:00:05Z","lev`)

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one look, then stop
	var out bytes.Buffer
	if err := followLogs(ctx, state, "Fn", offsets, &out); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"10:00:01.000 INFO  Fn-2  a",
		"10:00:02.000 INFO  Fn-1  b",
		"10:00:02.000       Fn-1  panic: boom",
		"10:00:03.000 WARN  Fn-2  c",
		"10:00:04.000 INFO  Fn-1  d",
	}, "\n") + "\n"
	if out.String() != want {
		t.Errorf("followed:\n%s\nwant\n%s", out.String(), want)
	}
}
