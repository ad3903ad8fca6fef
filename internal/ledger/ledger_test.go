package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/internal/ledger"
	"github.com/onceflow/onceflow/pkg/cloudevent"
)

func event(t *testing.T, typ, subject string, data any) cloudevent.Event {
	t.Helper()
	ev, err := cloudevent.New("mv-1", ledger.Source, typ, subject, time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC), data)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestHandler_decides_a_movement_as_its_status_an_entry_and_a_balance_update(t *testing.T) {
	tests := []struct {
		name      string
		typ       string
		reason    string
		wantDelta string
	}{
		{"credit adds under an overflow condition", ledger.Credited, ledger.ReasonBalanceOverflow, "5000"},
		{"debit subtracts under a funds condition", ledger.Debited, ledger.ReasonInsufficientFunds, "-5000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := event(t, tt.typ, "acc-1", ledger.MovementData{AccountID: "acc-1", Amount: 5000})
			eff, err := ledger.Handler("app").Decide(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			writes, err := eff.TransactWriteItems()
			if err != nil || len(writes) != 3 || writes[0].Update == nil || writes[1].Put == nil || writes[2].Update == nil {
				t.Fatalf("writes = %+v, %v; want the movement's status, the entry, the account's balance", writes, err)
			}
			for i, w := range []*string{writes[0].Update.ConditionExpression, writes[1].Put.ConditionExpression} {
				if w == nil {
					t.Fatalf("write %d has no condition; want it written once only", i)
				}
			}
			if s := writes[0].Update.Key["pk"].(*types.AttributeValueMemberS).Value; s != "MOVEMENT#mv-1" {
				t.Fatalf("status written to %s; want the movement of the event", s)
			}
			upd := writes[2]
			if !hasNumber(upd.Update.ExpressionAttributeValues, tt.wantDelta) {
				t.Fatalf("balance update values %v; want delta %s", upd.Update.ExpressionAttributeValues, tt.wantDelta)
			}
			if upd.Update.ConditionExpression == nil {
				t.Fatal("the balance update has no condition")
			}
			if eff[2].Reason() != tt.reason {
				t.Fatalf("reason = %q; want %q", eff[2].Reason(), tt.reason)
			}
			again, _ := ledger.Handler("app").Decide(context.Background(), ev)
			againWrites, _ := again.TransactWriteItems()
			if *againWrites[2].Update.UpdateExpression != *upd.Update.UpdateExpression {
				t.Fatal("the same event decided two different effects")
			}
		})
	}
}

func TestHandler_malformed_movements(t *testing.T) {
	tests := []struct {
		name    string
		subject string
		data    any
	}{
		{"zero amount", "acc-1", map[string]any{"accountId": "acc-1", "amount": 0}},
		{"negative amount", "acc-1", map[string]any{"accountId": "acc-1", "amount": -3}},
		{"fractional amount", "acc-1", map[string]any{"accountId": "acc-1", "amount": 1.5}},
		{"missing account", "acc-1", map[string]any{"amount": 3}},
		{"extra field", "acc-1", map[string]any{"accountId": "acc-1", "amount": 3, "reference": "r"}},
		{"subject is another account", "acc-2", map[string]any{"accountId": "acc-1", "amount": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ledger.Handler("app").Decide(context.Background(), event(t, ledger.Credited, tt.subject, tt.data))
			if !errors.Is(err, cloudevent.ErrMalformed) {
				t.Fatalf("err = %v; want malformed", err)
			}
		})
	}
}

func TestEventID_is_stable_per_account_and_reference(t *testing.T) {
	a, b := ledger.EventID("acc-1", "inv-1"), ledger.EventID("acc-1", "inv-1")
	if a != b || a == ledger.EventID("acc-2", "inv-1") || a == ledger.EventID("acc-1", "inv-2") {
		t.Fatalf("EventID not stable and distinct: %s %s", a, b)
	}
	if len(a) > cloudevent.MaxIDLength {
		t.Fatalf("EventID %q longer than %d", a, cloudevent.MaxIDLength)
	}
}

func hasNumber(values map[string]types.AttributeValue, n string) bool {
	for _, v := range values {
		if num, ok := v.(*types.AttributeValueMemberN); ok && num.Value == n {
			return true
		}
	}
	return false
}
