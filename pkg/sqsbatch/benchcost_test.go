package sqsbatch_test

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The cost model prices each outcome in DynamoDB capacity units, by the rules of the Amazon
// DynamoDB Developer Guide:
//
//   - "Amazon DynamoDB Transactions: How it works", section "Capacity management for
//     transactions": a transactional write costs 2 write capacity units per item per 1 KB of
//     item size (rounded up), since each item is prepared and then committed.
//   - "Condition expressions" (and "DynamoDB read/write capacity mode", on conditional writes):
//     a conditional write whose condition fails still consumes write capacity, 1 WCU per KB
//     of the item (at least 1).
//   - A cancelled TransactWriteItems consumes capacity too. The guide gives no separate
//     figure for it; the model charges each item of a cancelled transaction as a failed
//     conditional write (1 WCU per KB, at least 1): the prepare phase, without the commit.
//     This is the model's assumption, marked as such in the table.
//   - A strongly consistent GetItem costs 1 RCU per 4 KB ("Read consistency"). The engine
//     reads only when DynamoDB did not return the stored record with the cancellation
//     (ReturnValuesOnConditionCheckFailure ALL_OLD, which costs nothing extra), so RCU is 0 on
//     every path below.
//
// Sizes are DynamoDB's: attribute names plus values ("Item sizes and formats").

// itemSize is an item's size as DynamoDB counts it: the names and values of its attributes.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += len(v.Value)/2 + 1
		default:
			n += 8 // the benchmark's items hold strings and numbers only
		}
	}
	return n
}

func kilobytes(size int) float64 { return float64((size + 1023) / 1024) }

// costRow is the capacity one message with one outcome consumes.
type costRow struct {
	outcome  string
	calls    string
	wcu, rcu float64
	rule     string
}

// costModel prices the benchmark's message (a note Put and its record Put) per outcome.
func costModel(items []types.TransactWriteItem) []costRow {
	committed, cancelled := 0.0, 0.0
	for _, it := range items {
		kb := kilobytes(itemSize(it.Put.Item))
		committed += 2 * kb
		cancelled += max(kb, 1)
	}
	record := max(kilobytes(itemSize(items[len(items)-1].Put.Item)), 1)
	return []costRow{
		{"applied", "1 TransactWriteItems", committed, 0, "2 WCU per item per KB in a transaction"},
		{"applied, packed (share of a pack)", "1/k TransactWriteItems", committed, 0,
			"the same per item: packing saves round trips, not capacity"},
		{"duplicate", "1 TransactWriteItems, cancelled", cancelled, 0,
			"cancelled transaction: 1 WCU per item per KB (model's assumption)"},
		{"duplicate, cached", "none", 0, 0, "no request"},
		{"rejected", "1 TransactWriteItems cancelled + 1 PutItem", cancelled + record, 0,
			"cancelled transaction, then a standard write of the record"},
	}
}

func printCost(w io.Writer, rows []costRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "outcome\tDynamoDB calls\tWCU/msg\tRCU/msg\trule")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%s\n", r.outcome, r.calls, r.wcu, r.rcu, r.rule)
	}
	tw.Flush()
}
