package app_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/pkg/testkit"
)

func TestLedger_logs_each_message_with_the_trace_of_its_sender_and_its_idempotency_key(t *testing.T) {
	t.Parallel()
	db, q := testkit.DynamoDB(t), testkit.SQS(t)
	table, _ := testkit.StreamTable(t, db, "app")
	var logs bytes.Buffer
	ledger, err := app.NewLedger(config.Consumer{Name: "ledger", AppTable: table, IdempotencyTable: testkit.IdempotencyTable(t, db),
		DeadLetterQueueURL: testkit.CreateFIFOQueue(t, q, "ledger-dlq"), Retention: config.DefaultRetention},
		app.Deps{DynamoDB: db, SQS: q, Logger: app.NewLogger(&logs, "info", app.Namespace)})
	if err != nil {
		t.Fatal(err)
	}
	ev := sqsSample(t, "ledger-batch.json") // its first record carries an AWSTraceHeader, the others none
	invocation := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	//nolint:staticcheck // aws-lambda-go's own string key for the invocation's trace header
	invocation = context.WithValue(invocation, "x-amzn-trace-id", "Root=1-692be001-000000000000000000000001;Sampled=1")
	if resp, err := ledger.Handle(invocation, ev); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v, err %v", resp.BatchItemFailures, err)
	}
	want := map[string]string{ // trace id by message id
		ev.Records[0].MessageId: "1-692be000-4b1f9a3c7d2e8f6a1b3c5d7e", // the sender's
		ev.Records[1].MessageId: "1-692be001-000000000000000000000001", // the invocation's
	}
	found := 0
	for _, rec := range records(t, &logs) {
		id, _ := rec["messageId"].(string)
		trace, ok := want[id]
		if !ok || rec["outcome"] != "applied" {
			continue
		}
		found++
		key, _ := rec["idempotency_key"].(string)
		if rec["xray_trace_id"] != trace || !strings.HasPrefix(key, "ledger") || !strings.HasSuffix(key, rec["eventId"].(string)) ||
			rec["function_request_id"] != "req-1" || rec["message"] != "message applied" {
			t.Errorf("line of message %s = %v; want xray_trace_id %s and the idempotency key ledger + its event id", id, rec, trace)
		}
	}
	if found != len(want) {
		t.Fatalf("found %d applied lines of %d messages in\n%s", found, len(want), logs.String())
	}
}
