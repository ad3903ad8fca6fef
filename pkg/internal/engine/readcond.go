package engine

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// maxExpression is the longest expression DynamoDB takes, in bytes.
const maxExpression = 4096

// readCheck is where a prepared transaction checks one read: items[index] carries its
// condition, as a ConditionCheck of its own or folded into the effect's write of the item.
type readCheck struct {
	read
	index  int
	folded bool
}

// conditioned conditions the effect's items on what the decision read being unchanged. A
// read's condition is folded into the effect's write of the same item, since DynamoDB takes
// one operation per item in a transaction; any other read is a ConditionCheck of its own,
// after the effect's writes. The items, checks included, may number at most limit.
func (rs *reads) conditioned(eventType string, items []types.TransactWriteItem, record itemRef, limit int) ([]types.TransactWriteItem, []readCheck, error) {
	invalid := func(format string, args ...any) error {
		return &EffectError{EventType: eventType, Problem: fmt.Sprintf(format, args...)}
	}
	if len(rs.items) == 0 {
		return items, nil, nil
	}
	written, effectItems := writtenItems(items, rs.items), len(items)
	items = slices.Clone(items)
	checks := make([]readCheck, 0, len(rs.items))
	for n, r := range rs.items {
		ref := r.ref()
		if ref == record {
			return nil, nil, invalid("it read its own idempotency record %s", ref)
		}
		check := readCheck{read: r}
		check.index, check.folded = written[ref]
		if !check.folded {
			check.index = len(items)
			items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
				TableName: aws.String(r.table), Key: r.key}})
		}
		w, err := fold(items[check.index], r.condition(), fmt.Sprintf("r%dx", n))
		if err != nil {
			return nil, nil, invalid("read %d of %s: %v", n, ref, err)
		}
		items[check.index] = w
		checks = append(checks, check)
	}
	if len(items) > limit {
		return nil, nil, invalid("%d writes and %d checks of what it read (%d reads, %d of them of items it writes); one transaction takes at most %d besides the engine's own items",
			effectItems, len(items)-effectItems, len(rs.items), len(rs.items)-(len(items)-effectItems), limit)
	}
	return items, checks, nil
}

// writtenItems maps the items read that the effect writes to the index of that write. A Put's
// key attributes are those of the table's reads and other writes.
func writtenItems(items []types.TransactWriteItem, reads []read) map[itemRef]int {
	keyNames := map[string][]string{}
	for _, r := range reads {
		keyNames[r.table] = slices.Sorted(maps.Keys(r.key))
	}
	for _, it := range items {
		if table, key := targetKey(it); table != "" && len(key) > 0 {
			keyNames[table] = slices.Sorted(maps.Keys(key))
		}
	}
	written := map[itemRef]int{}
	for i, it := range items {
		if ref, _, err := describe(it, keyNames); err == nil && ref.key != "" {
			written[ref] = i
		}
	}
	return written
}

// condition is what the commit requires of the item read: each attribute has the value read,
// and each attribute the handler expects but the item lacked is absent; or, for an item that
// was absent, that it is still absent.
func (r read) condition() expression.ConditionBuilder {
	if r.item == nil {
		return expression.AttributeNotExists(expression.NameNoDotSplit(slices.Min(slices.Collect(maps.Keys(r.key)))))
	}
	var conds []expression.ConditionBuilder
	for _, k := range slices.Sorted(maps.Keys(r.item)) {
		conds = append(conds, expression.NameNoDotSplit(k).Equal(expression.Value(r.item[k])))
	}
	for i, k := range r.expect { // once each, however often read
		if _, ok := r.item[k]; !ok && !slices.Contains(r.expect[:i], k) {
			conds = append(conds, expression.AttributeNotExists(expression.NameNoDotSplit(k)))
		}
	}
	if len(conds) == 1 {
		return conds[0]
	}
	return expression.And(conds[0], conds[1], conds[2:]...)
}

// matches reports whether item, as a failed condition returned it, is what was read: the
// read's part of the folded condition held, so the write's own condition failed.
func (r read) matches(item map[string]types.AttributeValue) bool {
	if r.item == nil || len(item) == 0 {
		return r.item == nil && len(item) == 0
	}
	for k, v := range r.item {
		if !equalValue(item[k], v) {
			return false
		}
	}
	for _, k := range r.expect {
		if _, read := r.item[k]; !read && item[k] != nil {
			return false
		}
	}
	return true
}

// equalValue compares two attribute values as DynamoDB does, sets in any order.
func equalValue(a, b types.AttributeValue) bool {
	switch a := a.(type) {
	case *types.AttributeValueMemberSS:
		b, ok := b.(*types.AttributeValueMemberSS)
		return ok && slices.Equal(slices.Sorted(slices.Values(a.Value)), slices.Sorted(slices.Values(b.Value)))
	case *types.AttributeValueMemberNS:
		b, ok := b.(*types.AttributeValueMemberNS)
		return ok && slices.Equal(slices.Sorted(slices.Values(a.Value)), slices.Sorted(slices.Values(b.Value)))
	}
	return reflect.DeepEqual(a, b)
}

// fold and-s cond into the condition of w, its placeholders renamed with prefix apart from
// those w has, and asks for the item when the condition fails (to tell whose part failed). It
// returns a copy: w's own structures are not changed.
func fold(w types.TransactWriteItem, cond expression.ConditionBuilder, prefix string) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return w, fmt.Errorf("build condition: %w", err)
	}
	c, names, values, ret := conditionOf(&w)
	for taken(*names, *values, prefix) {
		prefix = "r" + prefix
	}
	rename := func(p string) string { return p[:1] + prefix + p[1:] }
	text := placeholder.ReplaceAllStringFunc(aws.ToString(expr.Condition()), rename)
	if aws.ToString(*c) != "" {
		text = "(" + **c + ") AND (" + text + ")"
	}
	if len(text) > maxExpression {
		return w, fmt.Errorf("its condition is %d bytes; DynamoDB takes at most %d: read an item with fewer attributes", len(text), maxExpression)
	}
	*c, *names, *values = aws.String(text), maps.Clone(*names), maps.Clone(*values)
	for k, v := range expr.Names() {
		if *names == nil {
			*names = map[string]string{}
		}
		(*names)[rename(k)] = v
	}
	for k, v := range expr.Values() {
		if *values == nil {
			*values = map[string]types.AttributeValue{}
		}
		(*values)[rename(k)] = v
	}
	*ret = types.ReturnValuesOnConditionCheckFailureAllOld
	return w, nil
}

// taken reports whether a placeholder of w starts with prefix.
func taken(names map[string]string, values map[string]types.AttributeValue, prefix string) bool {
	for k := range names {
		if strings.HasPrefix(k[1:], prefix) {
			return true
		}
	}
	for k := range values {
		if strings.HasPrefix(k[1:], prefix) {
			return true
		}
	}
	return false
}

// conditionOf points into a copy of w's operation (w is changed to hold the copy): its
// condition, placeholders and what it returns when the condition fails.
func conditionOf(w *types.TransactWriteItem) (**string, *map[string]string, *map[string]types.AttributeValue, *types.ReturnValuesOnConditionCheckFailure) {
	switch {
	case w.Put != nil:
		p := *w.Put
		w.Put = &p
		return &p.ConditionExpression, &p.ExpressionAttributeNames, &p.ExpressionAttributeValues, &p.ReturnValuesOnConditionCheckFailure
	case w.Update != nil:
		u := *w.Update
		w.Update = &u
		return &u.ConditionExpression, &u.ExpressionAttributeNames, &u.ExpressionAttributeValues, &u.ReturnValuesOnConditionCheckFailure
	case w.Delete != nil:
		d := *w.Delete
		w.Delete = &d
		return &d.ConditionExpression, &d.ExpressionAttributeNames, &d.ExpressionAttributeValues, &d.ReturnValuesOnConditionCheckFailure
	default:
		c := *w.ConditionCheck
		w.ConditionCheck = &c
		return &c.ConditionExpression, &c.ExpressionAttributeNames, &c.ExpressionAttributeValues, &c.ReturnValuesOnConditionCheckFailure
	}
}

// changed returns a ReadChangedError when a cancellation (v, an effectFailed verdict) says
// that an item the decision read changed: a read's own check failed, or a write it was folded
// into failed on an item other than the one read. Nil when only the effect's own conditions
// failed.
func (p prepared) changed(v verdict) error {
	for _, c := range p.checks {
		if !slices.Contains(v.failed, c.index) {
			continue
		}
		if !c.folded || c.index >= len(v.reasons) || !c.matches(v.reasons[c.index].Item) {
			return &ReadChangedError{Item: c.ref().String()}
		}
	}
	return nil
}

// placeholder matches the placeholders the expression builder writes.
var placeholder = regexp.MustCompile(`[#:][0-9]+\b`)
