package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/onceflow/onceflow/internal/app"
)

func TestNewLogger_adds_the_request_id_and_honours_the_level(t *testing.T) {
	var out bytes.Buffer
	log := app.NewLogger(&out, "warn").With("consumer", "ledger")
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-42"})
	log.InfoContext(ctx, "dropped by level")
	log.WarnContext(ctx, "kept", "messageId", "m1")
	var rec map[string]any
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatalf("want exactly one JSON line, got %q: %v", out.String(), err)
	}
	if rec["requestId"] != "req-42" || rec["consumer"] != "ledger" || rec["messageId"] != "m1" || rec["msg"] != "kept" {
		t.Errorf("record = %v", rec)
	}
}

func TestNew_without_a_lambda_context_logs_without_request_id(t *testing.T) {
	var out bytes.Buffer
	app.NewLogger(&out, "nonsense").Info("hello")
	var rec map[string]any
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if _, ok := rec["requestId"]; ok || rec["level"] != "INFO" {
		t.Errorf("record = %v", rec)
	}
}
