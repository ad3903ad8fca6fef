package holdlist

import (
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/table"
)

// VersionCondition is true when the hold is still h as read: absent, or at h's version.
func VersionCondition(h Hold) expression.ConditionBuilder {
	switch {
	case !h.exists:
		return expression.AttributeNotExists(expression.Name(table.AttrKey))
	case h.Version == 0: // written before holds had versions
		return expression.AttributeExists(expression.Name(table.AttrKey)).And(expression.AttributeNotExists(expression.Name("version")))
	}
	return expression.Name("version").Equal(expression.Value(h.Version))
}

// HeadCondition is true when the hold is still h and eventID heads it.
func HeadCondition(h Hold, eventID string) expression.ConditionBuilder {
	if h.Version == 0 {
		return VersionCondition(h).And(expression.Name("blockerEventId").Equal(expression.Value(eventID)))
	}
	return VersionCondition(h).And(expression.Name("held[0].eventId").Equal(expression.Value(eventID)))
}

// Writes are the writes, in the table named tableName, that put next in place of prev (as
// read): the hold's own item first (a Put at the next version conditional on cond, or a Delete
// when nothing is held and no skip is kept), then each page whose entries changed (a Put, or a
// Delete when it emptied), which need no condition of their own: they commit with the hold's
// own item or not at all. None when there is nothing to write. A hold whose pages were not
// read can change only the entries of its own item, and never run out of them while it has
// pages.
func Writes(tableName string, prev, next Hold, cond expression.ConditionBuilder, now time.Time) ([]types.TransactWriteItem, error) {
	next = Clone(next)
	if next.loaded {
		Normalize(&next)
	} else if !Holds(next) && len(next.Pages) > 0 {
		return nil, fmt.Errorf("hold of group %s: its own entries ran out before its pages were read", next.Group)
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("build hold condition: %w", err)
	}
	var writes []types.TransactWriteItem
	switch {
	case !Holds(next) && len(next.Skipped) == 0 && !prev.exists:
		return nil, nil
	case !Holds(next) && len(next.Skipped) == 0:
		writes = append(writes, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(tableName), Key: table.ItemKey(prev.Key),
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}})
	default:
		next.Version = prev.Version + 1
		if !Holds(next) && next.ExpiresAt == 0 { // only skips are kept: TTL deletes it in time
			next.ExpiresAt = now.Add(table.Retention).Unix()
		}
		item, err := next.item(now)
		if err != nil {
			return nil, err
		}
		writes = append(writes, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(tableName), Item: item,
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}})
	}
	if !next.loaded {
		return writes, nil
	}
	pages := slices.Clone(prev.Pages)
	for _, p := range next.pageNumbers() {
		if !slices.Contains(pages, p) {
			pages = append(pages, p)
		}
	}
	for _, n := range pages {
		before, after := prev.entriesOf(n), next.entriesOf(n)
		switch {
		case slices.Equal(before, after):
		case len(after) == 0:
			writes = append(writes, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(tableName),
				Key: table.ItemKey(table.PageKey(next.Consumer, next.Group, n))}})
		default:
			item, err := attributevalue.MarshalMap(Page{Key: table.PageKey(next.Consumer, next.Group, n), Consumer: next.Consumer,
				Group: next.Group, Page: n, Held: after})
			if err != nil {
				return nil, fmt.Errorf("encode page %d of the hold of group %s: %w", n, next.Group, err)
			}
			writes = append(writes, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(tableName), Item: item}})
		}
	}
	return writes, nil
}

// Written is next as Writes wrote it in place of prev, once they committed: at the next
// version, read (it exists while it holds or keeps a skip), whole, its first page moved into
// its own item when its own entries ran out, and naming the pages it keeps (a page the change
// emptied is gone).
func Written(prev, next Hold) Hold {
	next.Version, next.exists, next.loaded = prev.Version+1, Holds(next) || len(next.Skipped) > 0, true
	Normalize(&next)
	next.Pages = next.pageNumbers()
	return next
}
