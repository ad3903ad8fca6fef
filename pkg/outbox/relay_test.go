package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/testkit"
)

type queues struct {
	client                *sqs.Client
	notes, ledger, parked string
}

func newQueues(t *testing.T) queues {
	c := testkit.SQS(t)
	return queues{client: c, notes: testkit.CreateFIFOQueue(t, c, "notes"), ledger: testkit.CreateFIFOQueue(t, c, "ledger"),
		parked: testkit.CreateFIFOQueue(t, c, "parked")}
}

func (q queues) routes() map[string][]string {
	return map[string][]string{"note.created": {q.notes}, "account.credited": {q.ledger}, "account.debited": {q.ledger}}
}

func newRelay(t *testing.T, client *sqs.Client, routes map[string][]string, opts ...func(*outbox.RelayConfig)) *outbox.Relay {
	t.Helper()
	p, err := publish.New(client, publish.Config{Attempts: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg := outbox.RelayConfig{Sender: p, Routes: routes, ParkQueue: testkit.CreateFIFOQueue(t, client, "parked")}
	for _, o := range opts {
		o(&cfg)
	}
	r, err := outbox.NewRelay(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// received drains the queue and returns "groupId/dedupId" per message, checking each body is
// the event it claims to be.
func received(t *testing.T, q queues, url string) []string {
	t.Helper()
	var got []string
	for _, m := range testkit.Drain(t, q.client, url) {
		ev, err := cloudevent.Decode([]byte(aws.ToString(m.Body)))
		if err != nil {
			t.Fatalf("received body is not an event: %v", err)
		}
		group, dedup := m.Attributes["MessageGroupId"], m.Attributes["MessageDeduplicationId"]
		if dedup != ev.ID || group != ev.Subject {
			t.Fatalf("message group %q dedup %q; want subject %q and event id %q", group, dedup, ev.Subject, ev.ID)
		}
		got = append(got, group+"/"+dedup)
	}
	return got
}

func TestRelay_run_twice_over_the_same_stream_records_delivers_each_event_once(t *testing.T) {
	t.Parallel()
	db := testkit.DynamoDB(t)
	table, stream := testkit.StreamTable(t, db, "app")
	placed, _ := cloudevent.New("order-placed-o1", "shop", "order.placed", "o-1", time.Now(), map[string]int{"total": 5})
	paid, _ := cloudevent.New("order-paid-o1", "shop", "order.paid", "o-1", time.Now(), map[string]int{"total": 5})
	// A service writes each event with its entity; a retried request writes nothing new.
	for _, ev := range []cloudevent.Event{placed, paid, placed} {
		w, err := outbox.Put(table, ev, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{w}})
		var cancelled *types.TransactionCanceledException
		if err != nil && !errors.As(err, &cancelled) {
			t.Fatal(err)
		}
	}
	recs := testkit.StreamRecords(t, testkit.Streams(t), stream)
	q := testkit.SQS(t)
	orders := testkit.CreateFIFOQueue(t, q, "orders")
	relay := newRelay(t, q, map[string][]string{"order.placed": {orders}, "order.paid": {orders}})
	for run := range 2 {
		resp, err := relay.Handle(context.Background(), events.DynamoDBEvent{Records: recs})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("run %d: failures %v, err %v; want none", run, resp.BatchItemFailures, err)
		}
	}
	got := received(t, queues{client: q}, orders)
	if want := []string{"o-1/order-placed-o1", "o-1/order-paid-o1"}; !slices.Equal(got, want) {
		t.Fatalf("queue received %v; want %v, each once and in order", got, want)
	}
}

func TestRelay_publishes_the_sample_outbox_inserts_and_skips_other_items(t *testing.T) {
	t.Parallel()
	ev := sampleInserts(t)
	q := newQueues(t)
	resp, err := newRelay(t, q.client, q.routes()).Handle(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v, err %v; want none", resp.BatchItemFailures, err)
	}
	if got := received(t, q, q.notes); !slices.Equal(got, []string{"note-7f3a/note-created-note-7f3a"}) {
		t.Fatalf("notes queue received %v", got)
	}
	if got := received(t, q, q.ledger); len(got) != 2 {
		t.Fatalf("ledger queue received %v; want the credit then the debit", got)
	}
}

func TestRelay_sends_one_event_type_to_every_queue_routed(t *testing.T) {
	t.Parallel()
	ev := sampleInserts(t)
	q := newQueues(t)
	notifier := testkit.CreateFIFOQueue(t, q.client, "notifier")
	routes := q.routes()
	routes["note.created"] = []string{q.notes, notifier}
	if resp, _ := newRelay(t, q.client, routes).Handle(context.Background(), ev); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", resp.BatchItemFailures)
	}
	for _, url := range []string{q.notes, notifier} {
		if got := received(t, q, url); len(got) != 1 {
			t.Fatalf("%s received %v; want the note.created event", url, got)
		}
	}
}

func TestRelay_reports_the_first_unpublished_record_and_every_later_one(t *testing.T) {
	t.Parallel()
	ev := sampleInserts(t)
	q := newQueues(t)
	routes := q.routes()
	routes["note.created"] = []string{q.notes + "-missing"} // a queue that does not exist
	delete(routes, "account.debited")                       // and a type with no route
	resp, err := newRelay(t, q.client, routes).Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range resp.BatchItemFailures {
		got = append(got, f.ItemIdentifier)
	}
	var want []string
	for _, r := range ev.Records[1:] { // record 0 is a note item, not an outbox event
		want = append(want, r.Change.SequenceNumber)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("failures %v; want %v", got, want)
	}
}

// sampleInserts is testdata/relay-insert.json, a stream batch as Lambda delivers it: a note's
// item, then three outbox items (a note.created, an account credited, then debited). The
// example application's events/outbox-relay-insert.json is this file.
func sampleInserts(t *testing.T) events.DynamoDBEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "relay-insert.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("decode testdata/relay-insert.json: %v", err)
	}
	return ev
}
