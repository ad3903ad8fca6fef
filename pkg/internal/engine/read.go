package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// read is one item a handler read through Read: its table and key, what it found (nil: the
// item was absent) and the attributes the handler expects an item to have (idempotency.Read
// takes them from the struct it decodes into), which the commit requires absent when the item
// lacked them.
type read struct {
	table  string
	key    map[string]types.AttributeValue
	item   map[string]types.AttributeValue
	expect []string
}

func (r read) ref() itemRef { return itemRef{r.table, canonicalKey(r.key)} }

// reads is what one decision read, in the order of its first reads. The handler may read
// from several goroutines.
type reads struct {
	db    DB
	retry Retry
	mu    sync.Mutex
	items []read
	took  time.Duration // time spent reading
	done  bool          // the decision is made: no more reads
}

type readsKey struct{}

// decide runs the handler on ev with a context through which it reads (Read), and returns its
// effect with what it read. A read after the handler returned is refused: it would be no
// condition of the commit.
func (c *Consumer) decide(ctx context.Context, ev cloudevent.Event) (Effect, *reads, error) {
	rs := &reads{db: c.db, retry: c.cfg.Retry}
	effect, err := c.handler.Decide(context.WithValue(ctx, readsKey{}, rs), ev)
	rs.mu.Lock()
	rs.done = true
	rs.mu.Unlock()
	return effect, rs, err
}

// Read reads the item at key of table consistently for the handler that ctx was given to by a
// Consumer, and remembers what it found, so that the commit is conditioned on it unchanged
// (see reads.conditions). A second read of one item in a decision answers what the first found.
// It returns nil when the item is absent. Outside a Consumer's decision it is an error.
func Read(ctx context.Context, table string, key map[string]types.AttributeValue, expect []string) (map[string]types.AttributeValue, error) {
	rs, ok := ctx.Value(readsKey{}).(*reads)
	if !ok {
		return nil, errors.New("read outside a decision: only a Handler that a Consumer calls reads through the engine")
	}
	return rs.read(ctx, read{table: table, key: key, expect: expect})
}

func (rs *reads) read(ctx context.Context, r read) (map[string]types.AttributeValue, error) {
	if r.table == "" || len(r.key) == 0 {
		return nil, errors.New("read: a table and a key are required")
	}
	rs.mu.Lock()
	defer rs.mu.Unlock() // reads of one decision are few: one at a time keeps the first answer
	if rs.done {
		return nil, errors.New("read after the handler returned its effect: it can be no condition of the commit")
	}
	ref := r.ref()
	if i := slices.IndexFunc(rs.items, func(x read) bool { return x.ref() == ref }); i >= 0 {
		rs.items[i].expect = append(rs.items[i].expect, r.expect...)
		return cloneItem(rs.items[i].item), nil
	}
	start := time.Now()
	callCtx, cancel := rs.retry.bound(ctx)
	defer cancel()
	out, err := rs.db.GetItem(callCtx, &dynamodb.GetItemInput{TableName: aws.String(r.table), Key: r.key,
		ConsistentRead: aws.Bool(true)}) // retried under Retry (retried.go): no loop of its own
	rs.took += time.Since(start)
	if refused(err) { // a key that does not match the table's schema: a handler bug
		return nil, Permanent(fmt.Errorf("read %s: %w", ref, err))
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ref, err)
	}
	if len(out.Item) > 0 {
		r.item = out.Item
	}
	rs.items = append(rs.items, r)
	return cloneItem(r.item), nil
}

// cloneItem copies item deeply: what the handler changes of it in place is not what the
// commit is conditioned on.
func cloneItem(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if item == nil {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v types.AttributeValue) types.AttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: cloneItem(v.Value)}
	case *types.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = cloneValue(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	case *types.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: slices.Clone(v.Value)}
	case *types.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: slices.Clone(v.Value)}
	case *types.AttributeValueMemberBS:
		bs := make([][]byte, len(v.Value))
		for i, b := range v.Value {
			bs[i] = slices.Clone(b)
		}
		return &types.AttributeValueMemberBS{Value: bs}
	case *types.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: slices.Clone(v.Value)}
	case *types.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: v.Value}
	case *types.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: v.Value}
	case *types.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: v.Value}
	case *types.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: v.Value}
	}
	return v
}

// effectRoom is how many items an event's effect and its checks of what it read may take in
// its transaction: the record takes one, and under HoldGroup the group's hold another.
func (c *Consumer) effectRoom(group string) int {
	if c.HoldsGroups() && group != "" {
		return MaxEffectWrites - 1
	}
	return MaxEffectWrites
}
