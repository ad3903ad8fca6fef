package workload

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
)

func TestHoldProblems_reports_a_held_group_but_not_an_injected_ones_or_a_finished_hold(t *testing.T) {
	item := func(v any) map[string]ddbtypes.AttributeValue {
		m, err := attributevalue.MarshalMap(v)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	held := []port.Held{{EventID: "e1", MessageID: "m1"}}
	items := []map[string]ddbtypes.AttributeValue{
		item(operator.Hold{Key: "#hold#ledger#acct-001", Consumer: "ledger", Group: "acct-001", BlockerEventID: "e1", Held: held}),
		item(operator.Hold{Key: "#hold#ledger#malformed-ledger-0", Consumer: "ledger", Group: "malformed-ledger-0", Held: held}),
		item(operator.Hold{Key: "#hold#ledger#acct-002", Consumer: "ledger", Group: "acct-002",
			Skipped: []operator.Decision{{Held: held[0], By: "ops"}}, ExpiresAt: 1}),
		item(operator.Record{Key: "ledger#e1", Consumer: "ledger", EventID: "e1", Outcome: "applied"}),
	}
	p, _ := holdProblems(items, map[string][]string{"dlq": {"malformed-ledger-0"}})
	if len(p) != 1 || !strings.Contains(p[0], "acct-001 of ledger held behind e1") {
		t.Errorf("problems = %q; want acct-001 held, and nothing about the injected group, the finished hold or a record", p)
	}
}
