package outbox

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/publish"
)

// ScanAPI is the DynamoDB call Find makes; *dynamodb.Client implements it.
type ScanAPI interface {
	Scan(ctx context.Context, params *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Selection says which outbox items Find returns: those of the event ids, if any are given,
// written in [Since, Until) (a zero bound is open).
type Selection struct {
	EventIDs     []string
	Since, Until time.Time
}

func (s Selection) match(it Item) bool {
	if len(s.EventIDs) > 0 && !slices.Contains(s.EventIDs, it.EventID) {
		return false
	}
	at, err := time.Parse(time.RFC3339Nano, it.CreatedAt)
	if err != nil {
		return s.Since.IsZero() && s.Until.IsZero()
	}
	return (s.Since.IsZero() || !at.Before(s.Since)) && (s.Until.IsZero() || at.Before(s.Until))
}

// Find returns the outbox items of table that sel selects, in the order they were written
// (per aggregate, the order the relay publishes them in). It scans the table (outbox items
// are keyed by aggregate, not by time or event id): an operator's tool, not a request path.
func Find(ctx context.Context, db ScanAPI, table string, sel Selection) ([]Item, error) {
	filter := expression.Name("kind").Equal(expression.Value(Kind))
	if len(sel.EventIDs) > 0 {
		ids := make([]expression.OperandBuilder, len(sel.EventIDs))
		for i, id := range sel.EventIDs {
			ids[i] = expression.Value(id)
		}
		filter = filter.And(expression.Name("eventId").In(ids[0], ids[1:]...))
	}
	expr, err := expression.NewBuilder().WithFilter(filter).Build()
	if err != nil {
		return nil, fmt.Errorf("find outbox items: %w", err)
	}
	in := &dynamodb.ScanInput{TableName: aws.String(table), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true)}
	var items []Item
	for p := dynamodb.NewScanPaginator(db, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan outbox of %s: %w", table, err)
		}
		var batch []Item
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &batch); err != nil {
			return nil, fmt.Errorf("decode outbox items: %w", err)
		}
		for _, it := range batch {
			if sel.match(it) {
				items = append(items, it)
			}
		}
	}
	slices.SortStableFunc(items, func(a, b Item) int {
		return cmp.Or(cmp.Compare(createdAt(a), createdAt(b)), cmp.Compare(a.PK, b.PK), cmp.Compare(a.SK, b.SK))
	})
	return items, nil
}

func createdAt(it Item) int64 {
	at, _ := time.Parse(time.RFC3339Nano, it.CreatedAt)
	return at.UnixNano()
}

// Republished is what Republish did with one item on one queue.
type Republished struct {
	Item  Item
	Queue string // "" when the item has no route or SQS refuses it
	Err   error
}

// Republish sends items again as the Relay sends them: to every queue routes names for the
// item's event type, in the items' order, with the event id as MessageDeduplicationId and the
// subject as MessageGroupId. SQS drops a send whose event id it saw in the last five minutes,
// and each consumer's idempotency record stops one it has processed, so republishing what was
// already delivered changes nothing. An item without a route, or one SQS refuses (the relay
// parks those), is reported with its error and not sent.
func Republish(ctx context.Context, sender BatchSender, routes map[string][]string, items []Item) []Republished {
	var out []Republished
	byQueue := map[string][]int{}
	var msgs = map[string][]publish.Message{}
	for _, it := range items {
		urls, ok := routes[it.EventType]
		switch err := unsendable(it); {
		case !ok:
			out = append(out, Republished{Item: it, Err: fmt.Errorf("event type %q has no route", it.EventType)})
			continue
		case err != nil:
			out = append(out, Republished{Item: it, Err: fmt.Errorf("SQS refuses it: %w", err)})
			continue
		}
		for _, url := range urls {
			byQueue[url] = append(byQueue[url], len(out))
			msgs[url] = append(msgs[url], it.message())
			out = append(out, Republished{Item: it, Queue: url})
		}
	}
	for _, url := range slices.Sorted(maps.Keys(byQueue)) {
		for i, err := range sender.SendBatch(ctx, url, msgs[url]) {
			out[byQueue[url][i]].Err = err
		}
	}
	return out
}
