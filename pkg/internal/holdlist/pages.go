package holdlist

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/table"
)

// pageBytes is about how much of a held list one item keeps (the hold's own, or one of its
// pages): far below DynamoDB's 400 KB, so that a change rewrites little and the commit's check
// of a held group reads little. Some 170 entries of a held live message with 36-character ids.
const pageBytes = 32 << 10

// Page is an overflow page of a hold, at table.PageKey: the entries of the held list it keeps,
// in order.
type Page struct {
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

// Normalize moves the first page into the hold's own item when its own entries have run out,
// so that the hold's own item lists the head whenever anything is held (the commit checks it
// alone).
func Normalize(h *Hold) {
	if !Holds(*h) || h.Held[0].page == 0 {
		return
	}
	first := h.Held[0].page
	for i := range h.Held {
		if h.Held[i].page == first {
			h.Held[i].page = 0
		}
	}
}

// OwnAfter is how many entries the hold's own item keeps after the head that are not surely
// e's (which a commit in the head's place takes off with the head).
func OwnAfter(h Hold, e Held) int {
	n := 0
	for _, o := range h.Held[min(1, len(h.Held)):] {
		if o.page == 0 && !o.surely(e) {
			n++
		}
	}
	return n
}

// PullPage moves the first page into the hold's own item, when one follows it: so that taking
// the head off (within a commit, one write), with the other entries of its message the own item
// keeps, leaves the own item listing the next head.
func PullPage(h *Hold) bool {
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

// Getter is the read of a hold's items.
type Getter interface {
	GetItem(ctx context.Context, params *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// LoadPages reads h's pages from the table named tableName, consistently, and appends their
// entries to its list, unless it has (Loaded): h is then the whole list. A page that is gone
// was emptied by a change after h was read: a write conditional on h's version then fails, and
// reads the hold again.
func LoadPages(ctx context.Context, db Getter, tableName string, h *Hold, optFns ...func(*dynamodb.Options)) error {
	if h.loaded {
		return nil
	}
	for _, n := range h.Pages {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tableName),
			Key: table.ItemKey(table.PageKey(h.Consumer, h.Group, n)), ConsistentRead: aws.Bool(true)}, optFns...)
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
	var p Page
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
