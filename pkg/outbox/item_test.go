package outbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/testkit"
)

func TestWrite_events_of_one_aggregate_share_a_partition_key_and_each_is_conditional_on_its_own_id(t *testing.T) {
	t.Parallel()
	db := testkit.DynamoDB(t)
	table, _ := testkit.StreamTable(t, db, "app")
	at := time.Now()
	credit, _ := cloudevent.New("mv-1", "bank", "account.credited", "acct-1", at, map[string]int{"amount": 5})
	debit, _ := cloudevent.New("mv-2", "bank", "account.debited", "acct-1", at, map[string]int{"amount": 3})
	other, _ := cloudevent.New("mv-3", "bank", "account.credited", "acct-2", at, map[string]int{"amount": 1})
	write := func(ev cloudevent.Event) error {
		w, err := outbox.Put(table, ev, at)
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{w}})
		return err
	}
	for _, ev := range []cloudevent.Event{credit, debit, other} {
		if err := write(ev); err != nil {
			t.Fatalf("write %s: %v; want each event of an aggregate stored", ev.ID, err)
		}
	}
	var cancelled *types.TransactionCanceledException
	if err := write(debit); !errors.As(err, &cancelled) {
		t.Fatalf("writing %s again: %v; want the transaction cancelled by its own outbox item", debit.ID, err)
	}
	pks := map[string]string{}
	for _, ev := range []cloudevent.Event{credit, debit, other} {
		got, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, Key: outbox.Key(ev.Subject, ev.ID)})
		if err != nil {
			t.Fatal(err)
		}
		var item outbox.Item
		if err := attributevalue.UnmarshalMap(got.Item, &item); err != nil || item.EventID != ev.ID {
			t.Fatalf("outbox.Key(%s, %s) found %+v (%v)", ev.Subject, ev.ID, item, err)
		}
		pks[ev.ID] = item.PK
	}
	if pks["mv-1"] != pks["mv-2"] || pks["mv-1"] == pks["mv-3"] {
		t.Fatalf("partition keys %v; want one per aggregate, so a stream keeps an aggregate's events in one shard, in order", pks)
	}
}
