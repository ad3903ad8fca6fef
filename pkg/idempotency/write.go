package idempotency

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Effect is what applying an event changes in DynamoDB: writes committed in one transaction
// with the idempotency record. An empty effect is valid: the event is recorded as applied and
// changes nothing else.
type Effect []Write

// Write is one write of an effect, made with Put, Update, Delete, Check or Raw and refined with
// If and OrReject:
//
//	idempotency.Update(table, key, expression.Add(expression.Name("balance"), expression.Value(-5))).
//		If(expression.Name("balance").GreaterThanEqual(expression.Value(5))).
//		OrReject("insufficient funds")
//
// Items and keys are anything attributevalue.MarshalMap takes (a struct with dynamodbav tags,
// a map), or a map[string]types.AttributeValue used as it is. A Write is a value: its methods
// return a changed copy.
type Write struct {
	op     op
	table  string
	item   any // Put
	key    any // Update, Delete, Check
	update *expression.UpdateBuilder
	cond   *expression.ConditionBuilder
	raw    types.TransactWriteItem
	reason string
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
func Put(table string, item any) Write { return Write{op: opPut, table: table, item: item} }

// Update applies update to the item at key, creating it if it does not exist.
func Update(table string, key any, update expression.UpdateBuilder) Write {
	return Write{op: opUpdate, table: table, key: key, update: &update}
}

// Delete deletes the item at key.
func Delete(table string, key any) Write { return Write{op: opDelete, table: table, key: key} }

// Check writes nothing: the transaction commits only if cond holds on the item at key. With
// OrReject it turns a business rule on another item into a rejection.
func Check(table string, key any, cond expression.ConditionBuilder) Write {
	return Write{op: opCheck, table: table, key: key, cond: &cond}
}

// Raw is a write given as the SDK's own type, for what the constructors do not cover. If has no
// effect on it: put the condition in item.
func Raw(item types.TransactWriteItem) Write { return Write{op: opRaw, raw: item} }

// If makes the write conditional on cond (and-ed with a condition already set). When cond is
// false the whole transaction is cancelled and the event is rejected: recorded as rejected with
// the write's reason, its effect not applied.
func (w Write) If(cond expression.ConditionBuilder) Write {
	if w.cond != nil {
		cond = w.cond.And(cond)
	}
	w.cond = &cond
	return w
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

// TransactWriteItem builds the write as the SDK's type, as the engine sends it.
func (w Write) TransactWriteItem() (types.TransactWriteItem, error) {
	if w.op == opRaw {
		return w.raw, nil
	}
	var b expression.Builder
	hasExpr := false
	if w.update != nil {
		b, hasExpr = b.WithUpdate(*w.update), true
	}
	if w.cond != nil {
		b, hasExpr = b.WithCondition(*w.cond), true
	}
	var expr expression.Expression
	if hasExpr {
		var err error
		if expr, err = b.Build(); err != nil {
			return types.TransactWriteItem{}, fmt.Errorf("build expression: %w", err)
		}
	}
	table := aws.String(w.table)
	switch w.op {
	case opPut:
		item, err := attributes(w.item)
		if err != nil {
			return types.TransactWriteItem{}, fmt.Errorf("item: %w", err)
		}
		return types.TransactWriteItem{Put: &types.Put{TableName: table, Item: item,
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(),
			ExpressionAttributeValues: expr.Values()}}, nil
	case opUpdate, opDelete, opCheck:
		key, err := attributes(w.key)
		if err != nil {
			return types.TransactWriteItem{}, fmt.Errorf("key: %w", err)
		}
		switch w.op {
		case opUpdate:
			return types.TransactWriteItem{Update: &types.Update{TableName: table, Key: key,
				UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
				ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}}, nil
		case opDelete:
			return types.TransactWriteItem{Delete: &types.Delete{TableName: table, Key: key,
				ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(),
				ExpressionAttributeValues: expr.Values()}}, nil
		default:
			return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: table, Key: key,
				ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(),
				ExpressionAttributeValues: expr.Values()}}, nil
		}
	}
	return types.TransactWriteItem{}, errors.New("empty write; make it with Put, Update, Delete, Check or Raw")
}

// attributes marshals v, or returns it as it is when it is already attribute values.
func attributes(v any) (map[string]types.AttributeValue, error) {
	if m, ok := v.(map[string]types.AttributeValue); ok {
		return m, nil
	}
	m, err := attributevalue.MarshalMap(v)
	if err == nil && len(m) == 0 {
		err = fmt.Errorf("%T marshals to no attributes; want a struct or a map", v)
	}
	return m, err
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
