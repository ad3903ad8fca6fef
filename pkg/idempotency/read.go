package idempotency

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/internal/engine"
)

// Read reads the item at key of table into out, consistently, for a Handler deciding an
// event: ctx is the context its Decide was given (RouteReading passes it to a route). It
// reports whether the item exists, and leaves out as it is when it does not. The engine
// commits the effect only if every item read is still as read: each attribute has the value
// read, and each attribute out's struct names but the item lacked is still absent (an absent
// item, still absent). When a concurrent writer changed one, the event is decided again on what
// is there now (Config.Redecisions). A second read of one item answers what the first found.
// A throttled read is retried as a commit is (Config.Retry).
//
// Key is what Update takes; out is a pointer to what attributevalue.UnmarshalMap fills (a
// struct with dynamodbav tags, a map), or nil. Outside a Consumer's decision Read is an error.
func Read(ctx context.Context, table string, key, out any) (bool, error) {
	k, err := attributes("key", key)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", table, err)
	}
	item, err := engine.Read(ctx, table, k, fieldNames(out))
	if err != nil || item == nil || out == nil {
		return item != nil, err
	}
	if m, ok := out.(*map[string]types.AttributeValue); ok {
		*m = item
		return true, nil
	}
	if err := attributevalue.UnmarshalMap(item, out); err != nil {
		return true, fmt.Errorf("read %s: decode item: %w", table, err)
	}
	return true, nil
}

// RouteReading is Route for a decide that reads (Read): it is given the context the Router's
// Decide was given. The data is decoded as Route decodes it, under the same options.
func RouteReading[T any](r *Router, eventType string, decide func(ctx context.Context, ev cloudevent.Event, data T) (Effect, error), opts ...RouteOption) {
	route(r, eventType, decide, opts)
}

// fieldNames lists the attribute names of the struct out points to, as attributevalue names
// them (dynamodbav tags, embedded structs flattened); nil for anything else.
func fieldNames(out any) []string {
	t := reflect.TypeOf(out)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	return structNames(t.Elem(), map[reflect.Type]bool{})
}

// structNames lists the attribute names of struct t; an embedded struct, or pointer to one,
// is flattened once (seen), as attributevalue does.
func structNames(t reflect.Type, seen map[reflect.Type]bool) []string {
	if seen[t] {
		return nil
	}
	seen[t] = true
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("dynamodbav")
		name, _, _ := strings.Cut(tag, ",")
		embedded := f.Type
		if embedded.Kind() == reflect.Pointer {
			embedded = embedded.Elem()
		}
		switch {
		case name == "-", !f.IsExported() && !f.Anonymous:
		case f.Anonymous && name == "" && embedded.Kind() == reflect.Struct:
			names = append(names, structNames(embedded, seen)...)
		case name != "":
			names = append(names, name)
		default:
			names = append(names, f.Name)
		}
	}
	return names
}
