package engine

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/table"
)

// Limits of one TransactWriteItems call. The record takes one of the 100 items.
const (
	MaxEffectWrites    = 99
	MaxTransactionSize = 4 << 20
)

// build turns the effect into the transaction's items, rejecting before any call to DynamoDB
// an effect that DynamoDB would refuse: a write that cannot be built, too many writes, too
// large, a write with no operation, or two writes to one item (the record included, as
// record). A Put's key attributes are those of the effect's other writes to its table (an
// Update, Delete or Check names them); a Put to a table no other write names is left for
// DynamoDB to check, which refuses two writes to one item as invalid (an EffectError too).
func (e Effect) build(eventType string, record itemRef) ([]types.TransactWriteItem, error) {
	invalid := func(format string, args ...any) error {
		return &EffectError{EventType: eventType, Problem: fmt.Sprintf(format, args...)}
	}
	if n := len(e); n > MaxEffectWrites {
		return nil, invalid("%d writes; one transaction takes at most %d besides the idempotency record", n, MaxEffectWrites)
	}
	items := make([]types.TransactWriteItem, 0, len(e)+1)
	keyNames := map[string][]string{record.table: {table.AttrKey}} // table -> its key attribute names
	for i, w := range e {
		item, err := w.Item, w.Err
		if err != nil {
			return nil, invalid("write %d: %v", i, err)
		}
		items = append(items, item)
		if table, key := targetKey(item); table != "" && len(key) > 0 {
			keyNames[table] = slices.Sorted(maps.Keys(key))
		}
	}
	seen := map[itemRef]int{record: -1}
	size := 0
	for i, item := range items {
		ref, n, err := describe(item, keyNames)
		if err != nil {
			return nil, invalid("write %d: %v", i, err)
		}
		if ref.key == "" { // a Put whose key attributes are unknown
			size += n
			continue
		}
		if j, dup := seen[ref]; dup {
			if j < 0 {
				return nil, invalid("write %d targets the idempotency record %s", i, ref)
			}
			return nil, invalid("writes %d and %d target the same item %s; DynamoDB allows one operation per item in a transaction", j, i, ref)
		}
		seen[ref] = i
		size += n
	}
	if size > MaxTransactionSize {
		return nil, invalid("about %d bytes; a transaction takes at most %d", size, MaxTransactionSize)
	}
	if err := e.checkRejections(eventType, record); err != nil {
		return nil, err
	}
	return items, nil
}

// itemRef identifies one item: its table and its key.
type itemRef struct{ table, key string }

func (r itemRef) String() string { return r.table + "[" + r.key + "]" }

// targetKey returns the table and key of an Update, Delete or ConditionCheck.
func targetKey(w types.TransactWriteItem) (string, map[string]types.AttributeValue) {
	switch {
	case w.Update != nil:
		return aws.ToString(w.Update.TableName), w.Update.Key
	case w.Delete != nil:
		return aws.ToString(w.Delete.TableName), w.Delete.Key
	case w.ConditionCheck != nil:
		return aws.ToString(w.ConditionCheck.TableName), w.ConditionCheck.Key
	}
	return "", nil
}

// describe returns the item a write targets and an estimate of its size in bytes. The key of
// a Put is empty when keyNames does not know its table's key attributes.
func describe(w types.TransactWriteItem, keyNames map[string][]string) (itemRef, int, error) {
	var (
		table  *string
		key    map[string]types.AttributeValue
		values []map[string]types.AttributeValue
	)
	ops := 0
	if p := w.Put; p != nil {
		ops++
		table, values = p.TableName, []map[string]types.AttributeValue{p.Item, p.ExpressionAttributeValues}
		key = map[string]types.AttributeValue{}
		for _, k := range keyNames[aws.ToString(p.TableName)] {
			if v, ok := p.Item[k]; ok {
				key[k] = v
			}
		}
	}
	if u := w.Update; u != nil {
		ops++
		table, key, values = u.TableName, u.Key, []map[string]types.AttributeValue{u.Key, u.ExpressionAttributeValues}
	}
	if d := w.Delete; d != nil {
		ops++
		table, key, values = d.TableName, d.Key, []map[string]types.AttributeValue{d.Key, d.ExpressionAttributeValues}
	}
	if c := w.ConditionCheck; c != nil {
		ops++
		table, key, values = c.TableName, c.Key, []map[string]types.AttributeValue{c.Key, c.ExpressionAttributeValues}
	}
	switch {
	case ops != 1:
		return itemRef{}, 0, fmt.Errorf("has %d operations; set exactly one of Put, Update, Delete, ConditionCheck", ops)
	case aws.ToString(table) == "":
		return itemRef{}, 0, fmt.Errorf("has no table name")
	case len(key) == 0 && w.Put == nil:
		return itemRef{}, 0, fmt.Errorf("has no key")
	case w.Put != nil && len(key) < len(keyNames[*table]):
		return itemRef{}, 0, fmt.Errorf("Put item lacks key attributes: it has %v of %v", slices.Sorted(maps.Keys(key)), keyNames[*table]) //nolint:staticcheck // Put is idempotency.Put, which the handler called
	}
	size := 0
	for _, m := range values {
		size += mapSize(m)
	}
	if len(key) == 0 {
		return itemRef{table: *table}, size, nil
	}
	return itemRef{table: *table, key: canonicalKey(key)}, size, nil
}

// canonicalKey renders a key the same way whatever the map order.
func canonicalKey(key map[string]types.AttributeValue) string {
	names := make([]string, 0, len(key))
	for k := range key {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		switch v := key[k].(type) {
		case *types.AttributeValueMemberS:
			b.WriteString("S:" + strconv.Quote(v.Value)) // quoted: a value's commas are not the separator
		case *types.AttributeValueMemberN:
			b.WriteString("N:" + v.Value)
		case *types.AttributeValueMemberB:
			b.WriteString("B:" + base64.StdEncoding.EncodeToString(v.Value))
		default:
			fmt.Fprintf(&b, "%T", v)
		}
	}
	return b.String()
}

// mapSize estimates the stored size of attributes as DynamoDB counts it: names plus values.
func mapSize(m map[string]types.AttributeValue) int {
	n := 0
	for k, v := range m {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)/2 + 1
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += len(s)/2 + 1
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + mapSize(v.Value) + len(v.Value)
	default:
		return 0
	}
}
