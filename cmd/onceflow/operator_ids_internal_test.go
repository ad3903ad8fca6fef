package main

import (
	"strings"
	"testing"
)

// A letter is named by any id the tools print for it: the message id its producer was told
// (make send prints it, hold get shows it as the blocker), the letter's own id in the
// dead-letter queue (dlq list) and its event id. An id no letter in view has is answered with
// the letters in view and their ids.
func TestDLQ_show_and_discard_take_every_id_the_tools_print_for_a_letter(t *testing.T) {
	c := newCloud(t)
	f := c.pipeline(t, pipelineConfig{})
	f.set(f.malformed, true, "bad-ids-1")
	sent := f.send(t, "acct-ids", "bad-ids-1", "bad-ids-1", map[string]int{"amount": 5})
	f.consume(t)
	if code, out := c.onceflow(t, "", "hold", "get", "--consumer", "ledger", "acct-ids"); code != 0 || !strings.Contains(out, sent) {
		t.Fatalf("hold get: %d; want the group held behind message %s", code, sent)
	}
	letters := f.inView(t)
	if len(letters) != 1 || letters[0].MessageID == sent {
		t.Fatalf("letters in view: %+v; want one, with an id of its own", letters)
	}
	own := letters[0].MessageID
	for _, id := range []string{sent, own, "bad-ids-1"} {
		if code, out := c.onceflow(t, "", "dlq", "show", "--queue", "LedgerDeadLetterQueue", id); code != 0 || !strings.Contains(out, `"id":"bad-ids-1"`) {
			t.Errorf("dlq show %s: %d; want the letter", id, code)
		}
	}
	for _, cmd := range [][]string{
		{"dlq", "show", "--queue", "LedgerDeadLetterQueue", "no-such-id"},
		{"dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "x", "--yes", "no-such-id"},
	} {
		code, out := c.onceflow(t, "", cmd...)
		if code != 1 || !strings.Contains(out, "no-such-id") {
			t.Errorf("%s of an id nothing has: %d; want a failure naming it", cmd[1], code)
		}
		for _, id := range []string{own, sent, "bad-ids-1", "acct-ids"} {
			if !strings.Contains(out, id) {
				t.Errorf("%s of an id nothing has does not list %s: the letters in view, by their ids", cmd[1], id)
			}
		}
	}
	code, out := c.onceflow(t, "", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "producer bug", "--by", "ops", "--yes", sent)
	if code != 0 || !strings.Contains(out, "deleted letter "+own) {
		t.Fatalf("dlq discard %s: %d; want its letter %s deleted", sent, code, own)
	}
	if code, out := c.onceflow(t, "", "hold", "get", "--consumer", "ledger", "acct-ids"); code != 0 || !strings.Contains(out, "not held") {
		t.Errorf("hold get after the discard: %d; want the group free", code)
	}
}
