package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/pkg/xray"
)

// records decodes one JSON record per line.
func records(t *testing.T, out *bytes.Buffer) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for line := range strings.Lines(out.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("line %q is not a JSON record: %v", line, err)
		}
		recs = append(recs, rec)
	}
	return recs
}

func invocation(requestID, traceHeader string) context.Context {
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: requestID})
	//nolint:staticcheck // aws-lambda-go's own string key for the invocation's trace header
	return context.WithValue(ctx, "x-amzn-trace-id", traceHeader)
}

func TestNewLogger_writes_the_Lambda_and_Powertools_keys(t *testing.T) {
	var out bytes.Buffer
	log := app.NewLogger(&out, "warn", "onceflow").With("consumer", "ledger")
	first := invocation("req-1", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	log.InfoContext(first, "dropped by level")
	log.WarnContext(first, "kept", "messageId", "m1")
	log.WarnContext(xray.NewContext(first, "Root=1-5759e989-000000000000000000000002;Sampled=1"), "a message's line")
	log.WarnContext(invocation("req-2", ""), "second invocation")
	recs := records(t, &out)
	if len(recs) != 3 {
		t.Fatalf("got %d records, want 3: %v", len(recs), recs)
	}
	want := []map[string]any{
		{"level": "WARN", "message": "kept", "service": "onceflow", "consumer": "ledger", "messageId": "m1",
			"function_request_id": "req-1", "cold_start": true, "xray_trace_id": "1-5759e988-bd862e3fe1be46a994272793"},
		{"message": "a message's line", "function_request_id": "req-1", "cold_start": true,
			"xray_trace_id": "1-5759e989-000000000000000000000002"},
		{"message": "second invocation", "function_request_id": "req-2", "cold_start": false, "xray_trace_id": nil},
	}
	for i, w := range want {
		for k, v := range w {
			if recs[i][k] != v {
				t.Errorf("record %d: %s = %v, want %v (record %v)", i, k, recs[i][k], v, recs[i])
			}
		}
		for _, k := range []string{"timestamp", "function_name"} {
			if _, ok := recs[i][k]; !ok {
				t.Errorf("record %d has no %s: %v", i, k, recs[i])
			}
		}
		for _, k := range []string{"time", "msg", "requestId"} {
			if _, ok := recs[i][k]; ok {
				t.Errorf("record %d still has slog's or Lambda's %s: %v", i, k, recs[i])
			}
		}
	}
}

func TestNewLogger_without_a_lambda_context_logs_no_invocation_keys(t *testing.T) {
	var out bytes.Buffer
	app.NewLogger(&out, "nonsense", "onceflow").Info("hello")
	rec := records(t, &out)[0]
	for _, k := range []string{"function_request_id", "cold_start", "xray_trace_id"} {
		if _, ok := rec[k]; ok {
			t.Errorf("record has %s: %v", k, rec)
		}
	}
	if rec["level"] != "INFO" || rec["message"] != "hello" || rec["service"] != "onceflow" {
		t.Errorf("record = %v", rec)
	}
}
