package main

import (
	"fmt"
	"strings"
	"testing"
)

// A deployed stack's outputs name its queues and tables by logical id, as the local cloud's
// endpoints.json does.
func TestStack_from_outputs_names_queues_and_tables_by_logical_id(t *testing.T) {
	s := stackFromOutputs("stack prod", map[string]string{
		"LedgerDeadLetterQueueUrl": "https://sqs.eu-west-1.amazonaws.com/1/prod-LedgerDLQ.fifo",
		"OutboxParkedQueueUrl":     "https://sqs.eu-west-1.amazonaws.com/1/prod-Parked",
		"IdempotencyTableName":     "prod-IdempotencyTable-X1",
		"AppTableName":             "prod-AppTable-Y2",
		"ApiUrl":                   "https://api.example/",
		"ConsumerNames":            "note-tagger, ledger,note-notifier",
		"ReplayQueues":             "https://q/StatementDLQ.fifo=https://q/StatementReplay.fifo, https://q/Other.fifo=",
	})
	if got, ok := s.replayQueue("https://q/StatementDLQ.fifo"); !ok || got != "https://q/StatementReplay.fifo" {
		t.Errorf("replayQueue(StatementDLQ) = %q, %v; want its replay queue", got, ok)
	}
	if got, ok := s.replayQueue("https://q/Other.fifo"); ok {
		t.Errorf("replayQueue(Other) = %q; want none for a pair without a replay queue", got)
	}
	if got := fmt.Sprint(s.queues); got != "map[LedgerDeadLetterQueue:https://sqs.eu-west-1.amazonaws.com/1/prod-LedgerDLQ.fifo OutboxParkedQueue:https://sqs.eu-west-1.amazonaws.com/1/prod-Parked]" {
		t.Errorf("queues = %s", got)
	}
	if got := fmt.Sprint(s.tables); got != "map[AppTable:prod-AppTable-Y2 IdempotencyTable:prod-IdempotencyTable-X1]" {
		t.Errorf("tables = %s", got)
	}
	for _, name := range []string{"IdempotencyTable", "prod-IdempotencyTable-X1"} {
		if got, err := s.table(name); err != nil || got != "prod-IdempotencyTable-X1" {
			t.Errorf("table(%s) = %q, %v; want the stack's idempotency table", name, got, err)
		}
	}
	if _, err := s.table("IdempotencyTabel"); err == nil || !strings.Contains(err.Error(), "stack prod has AppTable, IdempotencyTable") {
		t.Errorf("table(IdempotencyTabel) = %v; want an error naming the stack's tables", err)
	}
	if err := s.consumer("ledger"); err != nil {
		t.Error(err)
	}
	if err := s.consumer("ledgr"); err == nil || !strings.Contains(err.Error(), "ledger, note-notifier, note-tagger") {
		t.Errorf("consumer(ledgr) = %v; want an error naming the consumers", err)
	}
	var none *stack // no stack: names are taken as given
	if got, err := none.table("t1"); err != nil || got != "t1" || none.consumer("anyone") != nil {
		t.Errorf("no stack: table(t1) = %q, %v; want t1 and any consumer", got, err)
	}
}

// On a typo the tool names the valid queues, tables and consumers, and changes nothing.
func TestOnceflow_names_the_valid_ones_on_a_typo(t *testing.T) {
	c := newCloud(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a queue", []string{"dlq", "list", "--queue", "LedgerDLQ"}, `unknown queue "LedgerDLQ": the local cloud`},
		{"a redrive's target", []string{"dlq", "redrive", "--queue", "LedgerDeadLetterQueue", "--to", "Ledger"}, "LedgerDeadLetterQueue, LedgerQueue, NotesQueue, NotificationsQueue, OutboxParkedQueue"},
		{"a table", []string{"record", "get", "--consumer", "ledger", "--table", "Idempotency", "e-1"}, `unknown table "Idempotency": the local cloud`},
		{"a consumer", []string{"hold", "release", "--consumer", "Ledger", "--yes", "acct-1"}, `unknown consumer "Ledger": the local cloud (` + c.state + `/endpoints.json) has ledger, note-notifier, note-tagger`},
		{"a route's queue", []string{"outbox", "republish", "--event-id", "e-1", "--route", "account.credited=Ledger"}, `unknown queue "Ledger"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, out := c.onceflow(t, "", tt.args...); code != 2 || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d; want 2 with %q", code, tt.want)
			}
		})
	}
}
