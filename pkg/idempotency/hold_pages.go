package idempotency

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// pageBytes is about how much of a held list one item keeps (the hold's own, or one of its
// pages): far below DynamoDB's 400 KB, so that a change rewrites little and the commit's check
// of a held group reads little. Some 170 entries of a held live message with 36-character ids.
const pageBytes = 32 << 10

// pageSeparator joins a hold's key and a page number in the page's key. SQS refuses it in a
// MessageGroupId; a group of another source that contains it is refused when read (decodeHold
// and decodePage check whose item they read).
const pageSeparator = "\x1fpage"

// pageKey is the key of overflow page n of a group's hold: under the hold's own key, so under
// the prefix KeyPrefixes gives for holds (an IAM condition on it covers the pages).
func pageKey(consumer, group string, n int) string {
	return holdKey(consumer, group) + pageSeparator + strconv.Itoa(n)
}

// holdPage is an overflow page of a hold: the entries of the held list it keeps, in order.
type holdPage struct {
	Key      string `dynamodbav:"pk"`
	Consumer string `dynamodbav:"consumer"`
	Group    string `dynamodbav:"group"`
	Page     int    `dynamodbav:"page"`
	Held     []Held `dynamodbav:"held"`
}

// size is about how many bytes e takes in an item.
func (e Held) size() int {
	return len(e.EventID) + len(e.MessageID) + len(e.PayloadHash) + len(e.Reason) + len(e.HeldAt) + 64
}

// pageFor is the item a new entry e at the end of the list goes to: the last one in use while
// it has room, else a page after every page the hold had or has.
func (h Hold) pageFor(e Held) int {
	last, used, top := 0, 0, 0
	for _, o := range h.Held {
		if o.page != last {
			last, used = o.page, 0
		}
		used += o.size()
		top = max(top, o.page)
	}
	if used == 0 || used+e.size() <= pageBytes {
		return last
	}
	for _, p := range h.Pages {
		top = max(top, p)
	}
	return top + 1
}

// pageNumbers are the pages the entries are kept in, in order; for a hold whose pages were not
// read, the pages it names.
func (h Hold) pageNumbers() []int {
	if !h.loaded {
		return h.Pages
	}
	var pages []int
	for _, e := range h.Held {
		if e.page != 0 && !slices.Contains(pages, e.page) {
			pages = append(pages, e.page)
		}
	}
	return pages
}

// normalize moves the first page into the hold's own item when its own entries have run out,
// so that the hold's own item lists the head whenever anything is held (the commit checks it
// alone).
func (h *Hold) normalize() {
	if !h.held() || h.Held[0].page == 0 {
		return
	}
	first := h.Held[0].page
	for i := range h.Held {
		if h.Held[i].page == first {
			h.Held[i].page = 0
		}
	}
}

// ownAfter is how many entries the hold's own item keeps after the head that are not surely e's
// (which popWrite takes off with the head).
func (h Hold) ownAfter(e Held) int {
	n := 0
	for _, o := range h.Held[min(1, len(h.Held)):] {
		if o.page == 0 && !o.surely(e) {
			n++
		}
	}
	return n
}

// pullPage moves the first page into the hold's own item, when one follows it: so that taking
// the head off (within a commit, one write), with the other entries of its message the own item
// keeps, leaves the own item listing the next head.
func (h *Hold) pullPage() bool {
	i := slices.IndexFunc(h.Held, func(e Held) bool { return e.page != 0 })
	if i < 0 {
		return false
	}
	first := h.Held[i].page
	for i := range h.Held {
		if h.Held[i].page == first {
			h.Held[i].page = 0
		}
	}
	return true
}

func (h Hold) entriesOf(page int) []Held {
	var out []Held
	for _, e := range h.Held {
		if e.page == page {
			out = append(out, e)
		}
	}
	return out
}

// holdGetter is the read of a hold's items.
type holdGetter interface {
	GetItem(ctx context.Context, params *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// loadPages reads h's pages, consistently, and appends their entries to its list, unless it
// has (h.loaded): h is then the whole list. A page that is gone was emptied by a change after
// h was read: a write conditional on h's version then fails, and reads the hold again.
func loadPages(ctx context.Context, db holdGetter, table string, h *Hold, optFns ...func(*dynamodb.Options)) error {
	if h.loaded {
		return nil
	}
	for _, n := range h.Pages {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
			Key: Record{Key: pageKey(h.Consumer, h.Group, n)}.key(), ConsistentRead: aws.Bool(true)}, optFns...)
		if err != nil {
			return fmt.Errorf("read page %d of the hold of group %s: %w", n, h.Group, err)
		}
		entries, err := decodePage(out.Item, *h, n)
		if err != nil {
			return err
		}
		h.Held = append(h.Held, entries...)
	}
	h.loaded = true
	return nil
}

// decodePage reads page n of h; nil when the page is gone.
func decodePage(item map[string]types.AttributeValue, h Hold, n int) ([]Held, error) {
	if len(item) == 0 {
		return nil, nil
	}
	var p holdPage
	if err := attributevalue.UnmarshalMap(item, &p); err != nil {
		return nil, fmt.Errorf("decode page %d of the hold of group %s: %w", n, h.Group, err)
	}
	if p.Group != h.Group || p.Page != n || p.Consumer != h.Consumer {
		return nil, fmt.Errorf("decode page %d of the hold of group %s: item %s belongs to group %q of %s", n, h.Group, p.Key, p.Group, p.Consumer)
	}
	for i := range p.Held {
		p.Held[i].page = n
	}
	return p.Held, nil
}

// holdWrites are the writes that put next in place of prev (as read): the hold's own item
// first (a Put at the next version conditional on cond, or a Delete when nothing is held and
// no skip is kept), then each page whose entries changed (a Put, or a Delete when it emptied),
// which need no condition of their own: they commit with the hold's own item or not at all.
// None when there is nothing to write. A hold whose pages were not read can change only the
// entries of its own item, and never run out of them while it has pages.
func holdWrites(table string, prev, next Hold, cond expression.ConditionBuilder, now time.Time) ([]types.TransactWriteItem, error) {
	next = next.clone()
	if next.loaded {
		next.normalize()
	} else if !next.held() && len(next.Pages) > 0 {
		return nil, fmt.Errorf("hold of group %s: its own entries ran out before its pages were read", next.Group)
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("build hold condition: %w", err)
	}
	var writes []types.TransactWriteItem
	switch {
	case !next.held() && len(next.Skipped) == 0 && !prev.exists:
		return nil, nil
	case !next.held() && len(next.Skipped) == 0:
		writes = append(writes, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(table), Key: Record{Key: prev.Key}.key(),
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}})
	default:
		next.Version = prev.Version + 1
		if !next.held() && next.ExpiresAt == 0 { // only skips are kept: TTL deletes it in time
			next.ExpiresAt = now.Add(DefaultRetention).Unix()
		}
		item, err := next.item(now)
		if err != nil {
			return nil, err
		}
		writes = append(writes, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item,
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
			writes = append(writes, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(table),
				Key: Record{Key: pageKey(next.Consumer, next.Group, n)}.key()}})
		default:
			item, err := attributevalue.MarshalMap(holdPage{Key: pageKey(next.Consumer, next.Group, n), Consumer: next.Consumer,
				Group: next.Group, Page: n, Held: after})
			if err != nil {
				return nil, fmt.Errorf("encode page %d of the hold of group %s: %w", n, next.Group, err)
			}
			writes = append(writes, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item}})
		}
	}
	return writes, nil
}
