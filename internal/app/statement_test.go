package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/internal/statement"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The statement consumer, built as its main builds it, over the app table's real stream: each
// balance change the ledger wrote is one line, in order, across a redelivery of the stream's
// batch; a change the ledger did not write (a migration that dropped lastEvent) is
// dead-lettered with its reason and holds its account, the account's next change dead-lettered
// behind it in order, while another account goes on.
func TestStatement_writes_each_balance_change_once_in_order_and_holds_an_account_behind_a_bad_change(t *testing.T) {
	s := newSystem(t)
	dlqURL := testkit.CreateFIFOQueue(t, s.sqs, "statement-dlqURL")
	st, err := app.NewStatement(config.Consumer{Name: statement.Consumer, AppTable: s.app, IdempotencyTable: s.idem,
		DeadLetterQueueURL: dlqURL, Retention: config.DefaultRetention}, app.Deps{DynamoDB: s.db, SQS: s.sqs, Logger: slog.New(slog.NewJSONHandler(s.logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	streams, seen := testkit.Streams(t), 0
	changes := func() []events.DynamoDBEventRecord { // the account changes since the last call, as the mapping's filter passes them
		recs := testkit.StreamRecords(t, streams, s.stream)
		var out []events.DynamoDBEventRecord
		for _, r := range recs[seen:] {
			if kind := r.Change.NewImage["kind"]; (r.EventName == "INSERT" || r.EventName == "MODIFY") && kind.DataType() == events.DataTypeString && kind.String() == "account" {
				out = append(out, r)
			}
		}
		seen = len(recs)
		return out
	}
	invoke := func(recs []events.DynamoDBEventRecord) []events.DynamoDBBatchItemFailure {
		payload, _ := json.Marshal(events.DynamoDBEvent{Records: recs})
		out, err := st.Handle(ctx(t), payload)
		if err != nil {
			t.Fatal(err)
		}
		var resp events.DynamoDBEventResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return resp.BatchItemFailures
	}

	handle(t, s.ledger, sqsSample(t, "ledger-batch.json"))
	batch := changes()
	for range 2 { // the stream's batch, then the same batch again
		if f := invoke(batch); len(f) != 0 {
			t.Fatalf("batch item failures %v; want none", f)
		}
	}
	want := map[string][]int64{"acc-1001": {5000, 3800}, "acc-2002": {300}}
	for acct, w := range want {
		if got := s.lines(t, acct); !slices.Equal(got, w) {
			t.Fatalf("%s statement balances %v; want %v, one line per change in order", acct, got, w)
		}
	}

	// A change that comes after a later one of its account is refused, not written.
	late := batch[0]
	late.EventID, late.Change.SequenceNumber = "late-change", "1"
	if f := invoke([]events.DynamoDBEventRecord{late}); len(f) != 0 {
		t.Fatalf("batch item failures %v; want the late change rejected", f)
	}
	if got := s.lines(t, "acc-1001"); !slices.Equal(got, want["acc-1001"]) {
		t.Fatalf("acc-1001 statement balances %v after a late change; want %v", got, want["acc-1001"])
	}
	if !strings.Contains(s.logs.String(), statement.ReasonOutOfOrder) {
		t.Errorf("no log line says the late change was rejected %q", statement.ReasonOutOfOrder)
	}

	// A migration rewrites acc-2002's item without lastEvent; the ledger then credits it again.
	if _, err := s.db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(s.app), Key: ledger.AccountKey("acc-2002"),
		UpdateExpression:          aws.String("REMOVE lastEvent SET migratedBy = :m"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: "migration-7"}}}); err != nil {
		t.Fatal(err)
	}
	ev, err := ledger.NewEvent(ledger.Credited, "acc-2002", "after-the-migration", 25, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(ev)
	handle(t, s.ledger, testkit.Batch(testkit.FIFO("ledger").Message("acc-2002", string(body))))
	if f := invoke(changes()); len(f) != 0 {
		t.Fatalf("batch item failures %v; want none: the bad change and the one behind it dead-lettered", f)
	}
	if got := s.lines(t, "acc-2002"); !slices.Equal(got, want["acc-2002"]) {
		t.Errorf("acc-2002 statement balances %v; want %v, held behind the bad change", got, want["acc-2002"])
	}
	var reasons []string
	if err := dlq.Browse(ctx(t), s.sqs, dlqURL, func(l deadletter.Letter) bool {
		reasons = append(reasons, fmt.Sprintf("%s: %s", l.GroupID, l.Why()))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 1 || !strings.Contains(reasons[0], "names no movement") || !strings.HasPrefix(reasons[0], "pk=ACCOUNT#acc-2002|sk=ACCOUNT: ") {
		t.Errorf("first dead letters %q; want the bad change's, under acc-2002's key", reasons)
	}
	reasons = nil
	for _, m := range testkit.Drain(t, s.sqs, dlqURL) {
		reasons = append(reasons, aws.ToString(m.MessageAttributes[deadletter.AttrReason].StringValue))
	}
	if len(reasons) != 2 || !strings.Contains(reasons[1], "held behind") {
		t.Errorf("dead letters %q; want the bad change's, then the credit held behind it", reasons)
	}
}

// lines returns the balances of account's statement lines, in their order.
func (s *system) lines(t *testing.T, account string) []int64 {
	t.Helper()
	var out []int64
	for _, it := range s.items(t, s.app, statement.PK(account)) {
		if it["kind"] != "statement" {
			continue // the head
		}
		out = append(out, int64(it["balance"].(float64)))
	}
	return out
}
