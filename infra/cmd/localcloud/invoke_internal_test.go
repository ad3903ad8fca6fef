package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The outcome of each message of an invocation is read from what the function logged after
// the invocation started, on any of its environments.
func TestOutcomes_say_what_became_of_each_message(t *testing.T) {
	state := t.TempDir()
	logs := filepath.Join(state, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	before := `{"timestamp":"2026-01-01T00:00:00Z","level":"INFO","message":"message applied","messageId":"m-dup","outcome":"applied"}` + "\n"
	env1 := before + `START RequestId: r-1 Version: $LATEST
{"timestamp":"2026-01-01T00:00:01Z","level":"INFO","message":"message applied","messageId":"m-ok","eventId":"e-1","eventType":"account.credited","outcome":"applied"}
{"timestamp":"2026-01-01T00:00:01Z","level":"INFO","message":"message rejected","messageId":"m-rej","eventId":"e-2","eventType":"account.debited","outcome":"rejected","reason":"insufficient funds"}
{"timestamp":"2026-01-01T00:00:01Z","level":"ERROR","message":"message malformed","messageId":"m-bad","outcome":"malformed","error":"malformed message: body: not JSON"}
{"timestamp":"2026-01-01T00:00:01Z","level":"ERROR","message":"message failed permanently, dead-lettered and acknowledged","messageId":"m-bad","reason":"malformed message: body: not JSON"}
`
	env2 := `{"timestamp":"2026-01-01T00:00:01Z","level":"INFO","message":"message duplicate","messageId":"m-dup","eventId":"e-3","eventType":"account.credited","outcome":"duplicate","stored":"applied"}
{"timestamp":"2026-01-01T00:00:01Z","level":"WARN","message":"message failed","messageId":"m-retry","outcome":"failed","error":"throttled"}
`
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(logs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("LedgerFunction-1.log", env1)
	write("LedgerFunction-2.log", env2)
	offsets := map[string]int64{filepath.Join(logs, "LedgerFunction-1.log"): int64(len(before))}
	var out bytes.Buffer
	printOutcomes(&out, outcomes(state, "LedgerFunction", offsets,
		[]string{"m-ok", "m-rej", "m-bad", "m-dup", "m-retry"}, []string{"m-retry"}))
	for _, want := range []string{
		"m-ok  applied (account.credited e-1)",
		"m-rej  rejected: insufficient funds (account.debited e-2)",
		"m-bad  malformed: malformed message: body: not JSON; dead-lettered",
		"m-dup  duplicate (first processing: applied) (account.credited e-3)",
		"m-retry  failed: throttled; reported failed: left on the queue for redelivery",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("outcomes do not say %q:\n%s", want, out.String())
		}
	}
}
