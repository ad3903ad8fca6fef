package idempotency

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Effect is what applying an event changes in DynamoDB: writes committed in one transaction
// with the idempotency record. An empty effect is valid. Decided without a Read, it costs no
// write: the event is Ignored, acknowledged without a record, as a handler that decides the
// same on every delivery needs none. Decided from a Read, the event is recorded as applied,
// conditioned on what was read.
type Effect []Write

// Write is one write of an effect, made with Put, Update, Delete, Check or Raw and refined with
// If and OrReject:
//
//	idempotency.Update(table, key, expression.Add(expression.Name("balance"), expression.Value(-5))).
//		If(expression.Name("balance").GreaterThanEqual(expression.Value(5))).
//		OrReject("insufficient funds")
//
// Items and keys are anything attributevalue.MarshalMap takes (a struct with dynamodbav tags,
// a map), or a map[string]types.AttributeValue used as it is. Items, keys and expressions are
// encoded when the write is made, so a builder reused afterwards changes nothing in it. A Write
// is a value: its methods return a changed copy. A write that cannot be encoded carries its
// error, and the effect is refused (ErrInvalidEffect) before anything is sent.
type Write struct {
	op     op
	table  string
	item   map[string]types.AttributeValue // Put
	key    map[string]types.AttributeValue // Update, Delete, Check
	update string                          // Update
	conds  []string                        // and-ed
	names  map[string]string
	values map[string]types.AttributeValue
	raw    types.TransactWriteItem
	reason string
	err    error

	duplicate bool    // OrDuplicate: a failed condition proves the event was applied before
	onReject  []Write // OnReject: written with the rejection record
}

type op uint8

const (
	opNone op = iota
	opPut
	opUpdate
	opDelete
	opCheck
	opRaw
)

// Put writes item, replacing any item with its key.
func Put(table string, item any) Write {
	w := Write{op: opPut, table: table}
	w.item, w.err = attributes("item", item)
	return w
}

// Update applies update to the item at key, creating it if it does not exist.
func Update(table string, key any, update expression.UpdateBuilder) Write {
	w := keyed(opUpdate, table, key)
	if w.err == nil {
		expr, err := expression.NewBuilder().WithUpdate(update).Build()
		if err != nil {
			w.err = fmt.Errorf("build update: %w", err)
			return w
		}
		w.update = aws.ToString(expr.Update())
		w.addPlaceholders(expr.Names(), expr.Values())
	}
	return w
}

// Delete deletes the item at key.
func Delete(table string, key any) Write { return keyed(opDelete, table, key) }

// Check writes nothing: the transaction commits only if cond holds on the item at key. With
// OrReject it turns a business rule on another item into a rejection.
func Check(table string, key any, cond expression.ConditionBuilder) Write {
	return keyed(opCheck, table, key).If(cond)
}

// keyed is a write of op on the item at key.
func keyed(op op, table string, key any) Write {
	w := Write{op: op, table: table}
	w.key, w.err = attributes("key", key)
	return w
}

// Raw is a write given as the SDK's own type, for what the constructors do not cover. Put its
// condition in item: If on a Raw write is refused.
func Raw(item types.TransactWriteItem) Write { return Write{op: opRaw, raw: item} }

// If makes the write conditional on cond (and-ed with a condition already set). When cond is
// false the whole transaction is cancelled and the event is rejected: recorded as rejected with
// the write's reason, its effect not applied.
func (w Write) If(cond expression.ConditionBuilder) Write {
	if w.err != nil {
		return w
	}
	if w.op == opRaw {
		w.err = errors.New("If on a Raw write: put the condition in its TransactWriteItem")
		return w
	}
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		w.err = fmt.Errorf("build condition: %w", err)
		return w
	}
	// Each condition is built on its own, so its placeholders (#0, :0, ...) are renamed apart
	// from the update's and from the other conditions' before they share one expression.
	prefix := fmt.Sprintf("c%dx", len(w.conds))
	rename := func(p string) string { return p[:1] + prefix + p[1:] }
	names := make(map[string]string, len(expr.Names()))
	for k, v := range expr.Names() {
		names[rename(k)] = v
	}
	values := make(map[string]types.AttributeValue, len(expr.Values()))
	for k, v := range expr.Values() {
		values[rename(k)] = v
	}
	// The builder writes names and values only as placeholders, never as literals.
	w.conds = append(slices.Clone(w.conds), placeholder.ReplaceAllStringFunc(aws.ToString(expr.Condition()), rename))
	w.names, w.values = maps.Clone(w.names), maps.Clone(w.values)
	w.addPlaceholders(names, values)
	return w
}

// placeholder matches the placeholders the expression builder writes.
var placeholder = regexp.MustCompile(`[#:][0-9]+\b`)

func (w *Write) addPlaceholders(names map[string]string, values map[string]types.AttributeValue) {
	for k, v := range names {
		if w.names == nil {
			w.names = map[string]string{}
		}
		w.names[k] = v
	}
	for k, v := range values {
		if w.values == nil {
			w.values = map[string]types.AttributeValue{}
		}
		w.values[k] = v
	}
}

// OrReject names the business rule that a failure of the write's condition means ("insufficient
// funds"): it becomes the rejection reason stored in the record and logged. Without it the
// reason says which write's condition failed.
func (w Write) OrReject(reason string) Write {
	w.reason = reason
	return w
}

// Reason is the rejection reason set by OrReject.
func (w Write) Reason() string { return w.reason }

// TransactWriteItem returns the write as the SDK's type, as the engine sends it, or the error
// that made it impossible to encode.
func (w Write) TransactWriteItem() (types.TransactWriteItem, error) {
	if w.err != nil {
		return types.TransactWriteItem{}, w.err
	}
	var cond *string
	switch len(w.conds) {
	case 0:
	case 1:
		cond = aws.String(w.conds[0])
	default:
		cond = aws.String("(" + strings.Join(w.conds, ") AND (") + ")")
	}
	table := aws.String(w.table)
	switch w.op {
	case opRaw:
		return w.raw, nil
	case opPut:
		return types.TransactWriteItem{Put: &types.Put{TableName: table, Item: w.item, ConditionExpression: cond,
			ExpressionAttributeNames: w.names, ExpressionAttributeValues: w.values}}, nil
	case opUpdate:
		return types.TransactWriteItem{Update: &types.Update{TableName: table, Key: w.key, UpdateExpression: aws.String(w.update),
			ConditionExpression: cond, ExpressionAttributeNames: w.names, ExpressionAttributeValues: w.values}}, nil
	case opDelete:
		return types.TransactWriteItem{Delete: &types.Delete{TableName: table, Key: w.key, ConditionExpression: cond,
			ExpressionAttributeNames: w.names, ExpressionAttributeValues: w.values}}, nil
	case opCheck:
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: table, Key: w.key, ConditionExpression: cond,
			ExpressionAttributeNames: w.names, ExpressionAttributeValues: w.values}}, nil
	}
	return types.TransactWriteItem{}, errors.New("empty write; make it with Put, Update, Delete, Check or Raw")
}

// attributes marshals v, the write's what, or returns it as it is when it is already
// attribute values.
func attributes(what string, v any) (map[string]types.AttributeValue, error) {
	if m, ok := v.(map[string]types.AttributeValue); ok {
		return m, nil
	}
	m, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%s: %T marshals to no attributes; want a struct or a map", what, v)
	}
	return m, nil
}

// TransactWriteItems builds every write of the effect as the SDK's type, for tests of a
// handler and for logging; the engine builds and checks them itself before committing.
func (e Effect) TransactWriteItems() ([]types.TransactWriteItem, error) {
	items := make([]types.TransactWriteItem, len(e))
	for i, w := range e {
		var err error
		if items[i], err = w.TransactWriteItem(); err != nil {
			return nil, fmt.Errorf("write %d: %w", i, err)
		}
	}
	return items, nil
}
