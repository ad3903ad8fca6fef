package outbox_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// writeOutbox writes one outbox item per event, the i-th at base + i minutes.
func writeOutbox(t *testing.T, db *dynamodb.Client, table string, base time.Time, evs ...cloudevent.Event) {
	t.Helper()
	for i, ev := range evs {
		w, err := outbox.Put(table, ev, base.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{w}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRepublish_resends_selected_outbox_items_to_their_queues_with_their_event_ids(t *testing.T) {
	t.Parallel()
	db := testkit.DynamoDB(t)
	table, _ := testkit.StreamTable(t, db, "app")
	q := newQueues(t)
	base := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var evs []cloudevent.Event
	for _, e := range []struct{ id, typ, subject string }{
		{"c1", "account.credited", "acct-1"}, {"n1", "note.created", "note-1"},
		{"c2", "account.debited", "acct-1"}, {"c3", "account.credited", "acct-2"},
	} {
		ev, _ := cloudevent.New(e.id, "test", e.typ, e.subject, base, map[string]int{"amount": 1})
		evs = append(evs, ev)
	}
	writeOutbox(t, db, table, base, evs...)
	p, err := publish.New(q.client, publish.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		sel        outbox.Selection
		notes, led []string
	}{
		{"by time range, in the order written", outbox.Selection{Since: base, Until: base.Add(3 * time.Minute)},
			[]string{"note-1/n1"}, []string{"acct-1/c1", "acct-1/c2"}},
		{"by event id", outbox.Selection{EventIDs: []string{"c3"}}, nil, []string{"acct-2/c3"}},
		{"nothing outside the range", outbox.Selection{Since: base.Add(time.Hour)}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, err := outbox.Find(t.Context(), db, table, tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range outbox.Republish(t.Context(), p, q.routes(), items) {
				if r.Err != nil {
					t.Errorf("%s: %v", r.Item.EventID, r.Err)
				}
			}
			if got := received(t, q, q.notes); !slices.Equal(got, tt.notes) {
				t.Errorf("notes queue got %v; want %v", got, tt.notes)
			}
			if got := received(t, q, q.ledger); !slices.Equal(got, tt.led) {
				t.Errorf("ledger queue got %v; want %v", got, tt.led)
			}
		})
	}
}

func TestRepublish_reports_an_event_type_without_a_route(t *testing.T) {
	t.Parallel()
	q := newQueues(t)
	p, _ := publish.New(q.client, publish.Config{})
	ev, _ := cloudevent.New("x1", "test", "order.placed", "o-1", time.Now(), nil)
	item, err := outbox.NewItem(ev, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got := outbox.Republish(t.Context(), p, q.routes(), []outbox.Item{item})
	if len(got) != 1 || got[0].Err == nil || got[0].Queue != "" {
		t.Errorf("Republish = %+v; want one unrouted item with its error", got)
	}
}
