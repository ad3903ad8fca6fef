package operator

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/internal/holdlist"
	"github.com/onceflow/onceflow/pkg/internal/table"
)

// API is the DynamoDB calls an Admin makes; *dynamodb.Client implements it. An Admin shared
// by goroutines calls it from each of them: an implementation must be safe for concurrent use,
// as *dynamodb.Client is.
type API interface {
	GetItem(ctx context.Context, params *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	DeleteItem(ctx context.Context, params *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	TransactWriteItems(ctx context.Context, params *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Attempts is the engine's count of an event's failed attempts for one consumer (see
// sqsbatch's dead-lettering after MaxAttempts).
type Attempts struct {
	Key          string `dynamodbav:"pk"`
	Attempts     int    `dynamodbav:"attempts"`
	LastError    string `dynamodbav:"lastError"`
	LastFailedAt string `dynamodbav:"lastFailedAt"`
	ExpiresAt    int64  `dynamodbav:"expiresAt"`
}

// Admin reads and clears what the engine keeps in an idempotency table, for an operator: a
// consumer's record of an event, its count of the event's failed attempts, a group's hold. It
// is safe for concurrent use.
type Admin struct {
	db    API
	table string
}

// New returns an Admin of the idempotency table named table.
func New(db API, table string) *Admin { return &Admin{db: db, table: table} }

// Record returns consumer's record of event eventID; ok is false when there is none (an
// expired record that TTL has not deleted yet is returned: see its ExpiresAt).
func (a *Admin) Record(ctx context.Context, consumer, eventID string) (rec Record, ok bool, err error) {
	ok, err = a.get(ctx, Key(consumer, eventID), &rec)
	return rec, ok, err
}

// Attempts returns consumer's count of event eventID's failed attempts; ok is false when none
// was counted.
func (a *Admin) Attempts(ctx context.Context, consumer, eventID string) (at Attempts, ok bool, err error) {
	ok, err = a.get(ctx, table.AttemptsKey(consumer, eventID), &at)
	return at, ok, err
}

// Hold returns the hold of consumer's group, its whole list (its pages read); ok is false
// when the group is not held (h may still carry the operators' skips of a hold whose list has
// emptied).
func (a *Admin) Hold(ctx context.Context, consumer, group string) (Hold, bool, error) {
	h, err := a.hold(ctx, consumer, group)
	if err != nil {
		return holdOf(h), false, err
	}
	return holdOf(h), holdlist.Holds(h), nil
}

// hold reads the hold of consumer's group, whole.
func (a *Admin) hold(ctx context.Context, consumer, group string) (holdlist.Hold, error) {
	out, err := a.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(a.table),
		Key: table.ItemKey(table.HoldKey(consumer, group)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return holdlist.Hold{}, fmt.Errorf("get %s: %w", table.HoldKey(consumer, group), err)
	}
	h, err := holdlist.Decode(out.Item, consumer, group)
	if err != nil {
		return h, err
	}
	return h, holdlist.LoadPages(ctx, a.db, a.table, &h)
}

// DeleteRecord deletes consumer's record of event eventID and its attempt count, and returns
// the record it deleted (ok false when there was none). A redelivery of the event is then
// processed as new: its effect is applied again unless the effect's own conditions refuse it.
func (a *Admin) DeleteRecord(ctx context.Context, consumer, eventID string) (rec Record, ok bool, err error) {
	ok, err = a.delete(ctx, Key(consumer, eventID), &rec)
	if err != nil {
		return rec, ok, err
	}
	_, err = a.delete(ctx, table.AttemptsKey(consumer, eventID), &Attempts{})
	return rec, ok, err
}

// ReleaseHold deletes the hold of consumer's group, whatever it holds, with its pages and
// skips, and returns its own item (ok false when the group was not held): the group's later
// messages are then applied as they come, without the ones it held. An operator's tool uses
// ReleaseHoldIf.
func (a *Admin) ReleaseHold(ctx context.Context, consumer, group string) (h Hold, ok bool, err error) {
	if ok, err = a.delete(ctx, table.HoldKey(consumer, group), &h); err != nil || !ok {
		return h, ok, err
	}
	for _, n := range h.Pages {
		if _, err := a.delete(ctx, table.PageKey(consumer, group, n), &holdlist.Page{}); err != nil {
			return h, ok, err
		}
	}
	return h, ok, nil
}

func (a *Admin) get(ctx context.Context, key string, v any) (bool, error) {
	out, err := a.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(a.table),
		Key: table.ItemKey(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, fmt.Errorf("get %s: %w", key, err)
	}
	return decodeItem(key, out.Item, v)
}

func (a *Admin) delete(ctx context.Context, key string, v any) (bool, error) {
	out, err := a.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(a.table),
		Key: table.ItemKey(key), ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return false, fmt.Errorf("delete %s: %w", key, err)
	}
	return decodeItem(key, out.Attributes, v)
}

func decodeItem(key string, item map[string]types.AttributeValue, v any) (bool, error) {
	if len(item) == 0 {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(item, v); err != nil {
		return true, fmt.Errorf("decode %s: %w", key, err)
	}
	return true, nil
}
