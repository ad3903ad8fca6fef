package outbox_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// counts is a metrics.Recorder that keeps its counters.
type counts struct {
	mu sync.Mutex
	n  map[string]float64
}

func (c *counts) Count(name string, n float64)  { c.mu.Lock(); c.n[name] += n; c.mu.Unlock() }
func (c *counts) Observe(string, time.Duration) {}

func TestRelay_parks_an_item_SQS_refuses_and_publishes_the_records_after_it(t *testing.T) {
	t.Parallel()
	db := testkit.DynamoDB(t)
	table, stream := testkit.StreamTable(t, db, "app")
	q := newQueues(t)
	write := func(ev cloudevent.Event) {
		w, err := outbox.Put(table, ev, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{w}}); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := cloudevent.New("mv-a", "bank", "account.credited", "acct-a", time.Now(), map[string]int{"amount": 1})
	after, _ := cloudevent.New("mv-b", "bank", "account.credited", "acct-b", time.Now(), map[string]int{"amount": 2})
	// A producer that writes its outbox item itself, with a body SQS refuses (U+FFFE).
	badBody := `{"specversion":"1.0","id":"note-created-n-bad","source":"x","type":"note.created","subject":"n-bad","data":{"title":"` + "\uFFFE" + `"}}`
	bad := outbox.Item{Kind: outbox.Kind, EventID: "note-created-n-bad", EventType: "note.created", Subject: "n-bad", Body: badBody}
	key := outbox.Key(bad.Subject, bad.EventID)
	bad.PK, bad.SK = key["pk"].(*types.AttributeValueMemberS).Value, key["sk"].(*types.AttributeValueMemberS).Value
	write(before)
	av, _ := attributevalue.MarshalMap(bad)
	if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: av}); err != nil {
		t.Fatal(err)
	}
	write(after)
	recs := testkit.StreamRecords(t, testkit.Streams(t), stream)
	m := &counts{n: map[string]float64{}}
	relay := newRelay(t, q.client, q.routes(), func(c *outbox.RelayConfig) { c.ParkQueue, c.Metrics = q.parked, m })
	resp, err := relay.Handle(context.Background(), events.DynamoDBEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v, err %v; want none: the item SQS refuses is parked, not retried", resp.BatchItemFailures, err)
	}
	if got := received(t, q, q.ledger); !slices.Equal(got, []string{"acct-a/mv-a", "acct-b/mv-b"}) {
		t.Fatalf("ledger queue received %v; want the records before and after the parked one", got)
	}
	parked := testkit.Drain(t, q.client, q.parked)
	if len(parked) != 1 {
		t.Fatalf("park queue holds %d messages; want the one item SQS refuses", len(parked))
	}
	var p struct{ Reason, SequenceNumber, EventID, EventType, Subject, Body string }
	if err := json.Unmarshal([]byte(aws.ToString(parked[0].Body)), &p); err != nil {
		t.Fatal(err)
	}
	body, _ := base64.StdEncoding.DecodeString(p.Body)
	if p.EventID != bad.EventID || p.Subject != "n-bad" || p.SequenceNumber != recs[1].Change.SequenceNumber ||
		!strings.Contains(p.Reason, "U+FFFE") || string(body) != badBody {
		t.Fatalf("parked %+v (body %q); want the event, its stream position, its body and the reason", p, body)
	}
	if m.n[metrics.Parked] != 1 || m.n[metrics.Published] != 2 {
		t.Fatalf("metrics %v; want 1 parked, 2 published", m.n)
	}
}

func TestRelay_publishes_an_event_with_emoji_and_noncharacters_through_the_local_SQS_emulator(t *testing.T) {
	t.Parallel()
	db := testkit.DynamoDB(t)
	table, stream := testkit.StreamTable(t, db, "app")
	q := newQueues(t)
	text := "launch 🚀 \uFFFE done"
	ev, _ := cloudevent.New("note-created-n-emoji", "shop", "note.created", "n-emoji", time.Now(), map[string]string{"content": text})
	w, err := outbox.Put(table, ev, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{w}}); err != nil {
		t.Fatal(err)
	}
	recs := testkit.StreamRecords(t, testkit.Streams(t), stream)
	resp, err := newRelay(t, q.client, q.routes()).Handle(context.Background(), events.DynamoDBEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v, err %v; want the event published (fauxqs refuses raw emoji)", resp.BatchItemFailures, err)
	}
	msgs := testkit.Drain(t, q.client, q.notes)
	if len(msgs) != 1 {
		t.Fatalf("notes queue holds %d messages; want 1", len(msgs))
	}
	got, err := cloudevent.Decode([]byte(aws.ToString(msgs[0].Body)))
	var data map[string]string
	if err != nil || json.Unmarshal(got.Data, &data) != nil || data["content"] != text {
		t.Fatalf("consumer would read %q (%v); want %q", data["content"], err, text)
	}
}
