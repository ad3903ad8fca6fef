package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/testkit"
)

func put(table, pk, sk string, extra map[string]types.AttributeValue) idempotency.Write {
	item := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
	for k, v := range extra {
		item[k] = v
	}
	return idempotency.Put(table, item)
}

func TestConsumer_refuses_an_effect_dynamodb_would_refuse_before_calling_it(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	big := &types.AttributeValueMemberS{Value: strings.Repeat("x", 300_000)}
	manyPuts := func(n int) []idempotency.Write {
		ws := make([]idempotency.Write, n)
		for i := range ws {
			ws[i] = put(f.App, fmt.Sprintf("item-%d", i), "x", nil)
		}
		return ws
	}
	tooBig := make([]idempotency.Write, 15)
	for i := range tooBig {
		tooBig[i] = put(f.App, fmt.Sprintf("item-%d", i), "x", map[string]types.AttributeValue{"blob": big})
	}
	cases := []struct {
		name    string
		writes  []idempotency.Write
		problem string
	}{
		{"100 writes", manyPuts(100), "100 writes"},
		{"over 4 MB", tooBig, "bytes"},
		{"one item twice", []idempotency.Write{idempotency.Delete(f.App, key("c", "x")), put(f.App, "b", "x", nil), put(f.App, "c", "x", nil)}, "writes 0 and 2 target the same item"},
		{"the record itself", []idempotency.Write{idempotency.Delete(f.Records,
			map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "c#ev"}})}, "idempotency record"},
		{"no operation", []idempotency.Write{idempotency.Raw(types.TransactWriteItem{})}, "0 operations"},
		{"two operations", []idempotency.Write{idempotency.Raw(types.TransactWriteItem{Put: &types.Put{}, Delete: &types.Delete{}})}, "2 operations"},
		{"an empty write", []idempotency.Write{{}}, "empty write"},
		{"an item that does not marshal", []idempotency.Write{idempotency.Put(f.App, 42)}, "item"},
		{"a put without the key its table has", []idempotency.Write{
			idempotency.Delete(f.App, map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "x"}}),
			idempotency.Put(f.App, map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "b"}})}, "lacks key attributes"},
		{"no table", []idempotency.Write{put("", "a", "x", nil)}, "no table"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := idempotency.HandlerFunc(func(context.Context, cloudevent.Event) (idempotency.Effect, error) {
				return idempotency.Effect(tc.writes), nil
			})
			c := f.ConsumerFor(t, "c", h)
			before := f.Requests.Total()
			res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m", "ev", "test.any", applytest.Counted{Counter: "x", By: 1}))
			if res.Outcome != idempotency.Failed || !errors.Is(err, idempotency.ErrInvalidEffect) || !idempotency.IsPermanent(err) {
				t.Fatalf("Process = %+v, %v; want a permanent invalid-effect error", res, err)
			}
			if !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("error %q does not say %q", err, tc.problem)
			}
			if n := f.Requests.Total() - before; n != 0 {
				t.Errorf("%d DynamoDB requests for an invalid effect, want 0", n)
			}
		})
	}
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
}

// A Put's key attributes are unknown when no other write names its table: the engine does not
// guess them (a table keyed on id may carry pk and sk for an index). Two Puts of one item are
// then refused by DynamoDB itself, in one request, with the same permanent outcome.
func TestConsumer_two_puts_of_one_item_of_an_unnamed_table_are_refused_by_dynamodb(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := idempotency.HandlerFunc(func(context.Context, cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect{put(f.App, "a", "x", nil), put(f.App, "a", "x", nil)}, nil
	})
	c := f.ConsumerFor(t, "c", h)
	before := f.Requests.Of("TransactWriteItems")
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m", applytest.Unique(t), "test.any", applytest.Counted{Counter: "x", By: 1}))
	if res.Outcome != idempotency.Failed || !errors.Is(err, idempotency.ErrInvalidEffect) || !idempotency.IsPermanent(err) {
		t.Fatalf("Process = %+v, %v; want a permanent invalid-effect error", res, err)
	}
	if n := f.Requests.Of("TransactWriteItems") - before; n != 1 {
		t.Errorf("%d transactions sent, want 1, refused and not retried", n)
	}
}

// Puts to a table keyed on something else than pk and sk, with pk and sk attributes of their
// own, are not mistaken for two writes to one item.
func TestConsumer_puts_with_equal_pk_and_sk_attributes_but_other_keys_commit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	orders := testkit.Table(t, f.DB, "orders", "id")
	item := func(id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id},
			"pk": &types.AttributeValueMemberS{Value: "C1"}, "sk": &types.AttributeValueMemberS{Value: "OPEN"}}
	}
	h := idempotency.HandlerFunc(func(context.Context, cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Put(orders, item("o1")), idempotency.Put(orders, item("o2"))}, nil
	})
	res, err := applytest.Process(context.Background(), f.ConsumerFor(t, "c", h), applytest.Message(t, "m", applytest.Unique(t), "test.any", applytest.Counted{Counter: "x", By: 1}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("Process = %+v, %v; want applied", res, err)
	}
}

func TestConsumer_99_writes_and_the_record_commit_in_one_transaction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ws := make([]idempotency.Write, idempotency.MaxEffectWrites)
	for i := range ws {
		ws[i] = put(f.App, fmt.Sprintf("item-%d", i), "x", nil)
	}
	h := idempotency.HandlerFunc(func(context.Context, cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect(ws), nil
	})
	c := f.ConsumerFor(t, "c", h)
	before := f.Requests.Of("TransactWriteItems")
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m", applytest.Unique(t), "test.any", applytest.Counted{Counter: "x", By: 1}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("Process = %+v, %v", res, err)
	}
	if n := f.Requests.Of("TransactWriteItems") - before; n != 1 {
		t.Errorf("%d transactions, want 1", n)
	}
}

func TestConsumer_a_transaction_dynamodb_refuses_as_invalid_is_dead_lettered_not_retried(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// The app table's key is pk and sk: a key without sk is refused with a ValidationException.
	h := idempotency.HandlerFunc(func(context.Context, cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Delete(f.App, map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}})}, nil
	})
	c := f.ConsumerFor(t, "c", h)
	before := f.Requests.Of("TransactWriteItems")
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m", applytest.Unique(t), "test.any", applytest.Counted{Counter: "x", By: 1}))
	if res.Outcome != idempotency.Failed || !errors.Is(err, idempotency.ErrInvalidEffect) || !idempotency.IsPermanent(err) {
		t.Fatalf("Process = %+v, %v; want a permanent invalid-effect error", res, err)
	}
	if !strings.Contains(err.Error(), "DynamoDB refused the transaction") {
		t.Errorf("error %q does not say DynamoDB refused it", err)
	}
	if n := f.Requests.Of("TransactWriteItems") - before; n != 1 {
		t.Errorf("%d transactions sent, want 1: a refused request is not retried", n)
	}
}
