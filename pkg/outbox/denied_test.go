package outbox_test

import (
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// A send IAM denies (the relay's role without sqs:SendMessage on a queue it routes to) is
// retried as any failure, from the first record not sent, in order: never parked, logged once
// per send naming the permission, counted as AccessDenied. Granted, the redelivery sends the
// rest, each event once.
func TestRelay_a_denied_send_is_retried_in_order_never_parked_and_reported(t *testing.T) {
	t.Parallel()
	ev := sampleInserts(t)
	q := newQueues(t)
	denying, proxy := fault.SQSDenying(t, fault.Deny{Action: "sqs:SendMessage", Prefix: "ledger-", QueryError: true})
	p, err := publish.New(denying, publish.Config{Attempts: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	logger, logs := testenv.NewLogs()
	recorder, emf := testenv.NewEMF(map[string]string{"Function": "outbox-relay"})
	relay, err := outbox.NewRelay(outbox.RelayConfig{Sender: p, Routes: q.routes(), ParkQueue: q.parked, Logger: logger, Metrics: recorder})
	if err != nil {
		t.Fatal(err)
	}
	credit := ev.Records[2].Change.SequenceNumber
	for range 3 {
		resp, err := relay.Handle(t.Context(), events.DynamoDBEvent{Records: ev.Records[2:]})
		if err != nil || len(resp.BatchItemFailures) == 0 || resp.BatchItemFailures[0].ItemIdentifier != credit {
			t.Fatalf("failures %v, %v; want the credit's %s first, retried", resp.BatchItemFailures, err, credit)
		}
	}
	testenv.CheckDenied(t, logs, emf, "sqs:sendmessage", "AccessDenied")
	if n := len(logs.Lines(denied.Message)); n != 3 {
		t.Errorf("%d denial lines; want one per invocation's denied send, 3", n)
	}
	if n := testenv.QueueDepth(t, q.client, q.parked); n != 0 {
		t.Errorf("%d parked; want nothing parked for a denial", n)
	}

	proxy.Set() // granted
	if resp, err := relay.Handle(t.Context(), ev); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v, %v once granted; want none", resp.BatchItemFailures, err)
	}
	want := []string{"acc-1001/" + ev.Records[2].Change.NewImage["eventId"].String(), "acc-1001/" + ev.Records[3].Change.NewImage["eventId"].String()}
	if got := received(t, q, q.ledger); !slices.Equal(got, want) {
		t.Errorf("ledger received %v; want %v: the credit, then the debit, once each", got, want)
	}
}
