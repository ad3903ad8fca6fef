package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/onceflow/onceflow/pkg/testkit"
)

// The ledger holds an account after one of its messages was dead-lettered: the account's later
// movements follow it to the dead-letter queue, in order, naming it, and none is applied out
// of order; other accounts go on.
func TestLedger_holds_an_account_behind_its_dead_lettered_message(t *testing.T) {
	s := newSystem(t)
	handle(t, s.ledger, sqsSample(t, "ledger-malformed.json")) // acc-1001, undecodable
	handle(t, s.ledger, sqsSample(t, "ledger-batch.json"))     // acc-1001 credit, acc-2002 credit, acc-1001 debit

	got := testkit.Drain(t, s.sqs, s.ledgerDLQ)
	if len(got) != 3 {
		t.Fatalf("dead-letter queue holds %d messages; want the malformed one and acc-1001's two held behind it", len(got))
	}
	if status, body := s.get(t, "/accounts/acc-1001"); status != http.StatusNotFound {
		t.Errorf("acc-1001 = %d %s; want nothing applied while it is held", status, body)
	}
	if status, body := s.get(t, "/accounts/acc-2002"); status != http.StatusOK || !strings.Contains(body, `"balance":300`) {
		t.Errorf("acc-2002 = %d %s; want its credit applied", status, body)
	}
	if !strings.Contains(s.logs.String(), "held behind") {
		t.Errorf("no log says why acc-1001's movements were dead-lettered")
	}
}

// The note-tagger goes on: a note's later events are applied after one was dead-lettered.
func TestNoteTagger_goes_on_after_a_dead_lettered_message(t *testing.T) {
	s := newSystem(t)
	batch := sqsSample(t, "note-tagger-batch.json")
	s.seedNotes(t, batch)
	handle(t, s.tagger, sqsSample(t, "note-tagger-malformed.json")) // note-7f3a, no id
	handle(t, s.tagger, batch)
	if got := testkit.Drain(t, s.sqs, s.notesDLQ); len(got) != 1 {
		t.Fatalf("dead-letter queue holds %d messages; want only the malformed one", len(got))
	}
	if got := len(s.items(t, s.app, "TAG#")); got != 8 {
		t.Errorf("tag items = %d; want the batch's 4 counters and 4 memberships, note-7f3a's included", got)
	}
}
