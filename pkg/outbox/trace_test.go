package outbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// sentTraces passes batches on to a real Publisher and keeps each message's trace header.
type sentTraces struct {
	*publish.Publisher
	mu     sync.Mutex
	traces map[string]string // by dedup id
}

// newSentTraces is a sentTraces on a real Publisher to the SQS of q.
func newSentTraces(t *testing.T, q *sqs.Client) *sentTraces {
	t.Helper()
	p, err := publish.New(q, publish.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &sentTraces{Publisher: p, traces: map[string]string{}}
}

func (s *sentTraces) SendBatch(ctx context.Context, url string, msgs []publish.Message) []error {
	s.mu.Lock()
	for _, m := range msgs {
		s.traces[m.DedupID] = m.TraceHeader
	}
	s.mu.Unlock()
	return s.Publisher.SendBatch(ctx, url, msgs)
}

func TestRelay_sends_each_event_with_the_trace_of_the_request_that_wrote_it(t *testing.T) {
	t.Parallel()
	db := testkit.DynamoDB(t)
	table, stream := testkit.StreamTable(t, db, "app")
	const traced = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	placed, _ := cloudevent.New("order-placed-t1", "shop", "order.placed", "o-t1", time.Now(), map[string]int{"total": 5})
	paid, _ := cloudevent.New("order-paid-t1", "shop", "order.paid", "o-t1", time.Now(), map[string]int{"total": 5})
	for _, w := range []struct {
		ev   cloudevent.Event
		opts []outbox.PutOption
	}{{placed, []outbox.PutOption{outbox.WithTrace(traced)}}, {paid, nil}} {
		w, err := outbox.Put(table, w.ev, time.Now(), w.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{w}}); err != nil {
			t.Fatal(err)
		}
	}
	q := testkit.SQS(t)
	orders := testkit.CreateFIFOQueue(t, q, "orders")
	sender := newSentTraces(t, q)
	relay, err := outbox.NewRelay(outbox.RelayConfig{Sender: sender, ParkQueue: testkit.CreateFIFOQueue(t, q, "parked"),
		Routes: map[string][]string{"order.placed": {orders}, "order.paid": {orders}}})
	if err != nil {
		t.Fatal(err)
	}
	recs := testkit.StreamRecords(t, testkit.Streams(t), stream)
	if resp, err := relay.Handle(context.Background(), events.DynamoDBEvent{Records: recs}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v, err %v", resp.BatchItemFailures, err)
	}
	want := map[string]string{placed.ID: traced, paid.ID: ""}
	for id, h := range want {
		if got, ok := sender.traces[id]; !ok || got != h {
			t.Errorf("event %s sent (%v) with trace header %q, want %q", id, ok, got, h)
		}
	}
}

// An operator's republish sends an event as the relay did: with the trace of the request that
// wrote it, so the consumer's lines of the re-sent event join that trace.
func TestRepublish_sends_each_event_with_its_trace(t *testing.T) {
	t.Parallel()
	const traced = "Root=1-5759e988-bd862e3fe1be46a994272794;Parent=53995c3f42cd8ad9;Sampled=1"
	q := testkit.SQS(t)
	orders := testkit.CreateFIFOQueue(t, q, "orders")
	sender := newSentTraces(t, q)
	ev, _ := cloudevent.New("order-placed-r1", "shop", "order.placed", "o-r1", time.Now(), map[string]int{"total": 5})
	it, err := outbox.NewItem(ev, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	it.TraceHeader = traced
	for _, r := range outbox.Republish(context.Background(), sender, map[string][]string{"order.placed": {orders}}, []outbox.Item{it}) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if got := sender.traces[ev.ID]; got != traced {
		t.Errorf("republished with trace header %q, want %q", got, traced)
	}
}
