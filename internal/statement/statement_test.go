package statement_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/internal/statement"
	"github.com/onceflow/onceflow/pkg/cloudevent"
)

func change(img map[string]events.DynamoDBAttributeValue, seq string) (cloudevent.Event, events.DynamoDBStreamRecord) {
	return cloudevent.Event{ID: "rec-1"}, events.DynamoDBStreamRecord{NewImage: img, SequenceNumber: seq}
}

func account(edit func(map[string]events.DynamoDBAttributeValue)) map[string]events.DynamoDBAttributeValue {
	img := map[string]events.DynamoDBAttributeValue{"kind": events.NewStringAttribute("account"),
		"id": events.NewStringAttribute("acc-1"), "balance": events.NewNumberAttribute("1250"),
		"lastEvent": events.NewStringAttribute("mv-1")}
	if edit != nil {
		edit(img)
	}
	return img
}

// A change of an account item is its line: the balance after it, the movement that set it,
// under a sort key that orders the account's lines as the stream ordered its changes.
func TestLineOf_is_the_balance_after_the_change_keyed_by_its_sequence_number(t *testing.T) {
	l, err := statement.LineOf(change(account(nil), "4500000000017450439091"))
	if err != nil {
		t.Fatal(err)
	}
	if l.PK != "STATEMENT#acc-1" || l.Balance != 1250 || l.EventID != "mv-1" || l.Change != "rec-1" || len(l.SK) != len("LINE#")+40 {
		t.Errorf("line %+v", l)
	}
	short, _ := statement.LineOf(change(account(nil), "999"))
	if short.SK >= l.SK {
		t.Errorf("sequence 999 sorts at %s, after %s", short.SK, l.SK)
	}
}

// What the ledger did not write is malformed, naming the field.
func TestLineOf_refuses_a_change_the_ledger_did_not_write(t *testing.T) {
	for _, tt := range []struct {
		name, seq, want string
		edit            func(map[string]events.DynamoDBAttributeValue)
	}{
		{"no lastEvent", "1", "names no movement", func(m map[string]events.DynamoDBAttributeValue) { delete(m, "lastEvent") }},
		{"another kind", "1", "not an account item", func(m map[string]events.DynamoDBAttributeValue) { m["kind"] = events.NewStringAttribute("entry") }},
		{"a fractional balance", "1", "not a whole number", func(m map[string]events.DynamoDBAttributeValue) { m["balance"] = events.NewNumberAttribute("1.5") }},
		{"no id", "1", "has no id", func(m map[string]events.DynamoDBAttributeValue) { delete(m, "id") }},
		{"no sequence number", "", "not a sequence number", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := statement.LineOf(change(account(tt.edit), tt.seq))
			if !errors.Is(err, cloudevent.ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("LineOf = %v; want malformed, %q", err, tt.want)
			}
		})
	}
}
