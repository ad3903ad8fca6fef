package notify_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/internal/notify"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The note-notifier as deployed: a lease.Consumer running a Notifier, on DynamoDB Local.
func TestNoteNotifier_notifies_each_note_once_across_redeliveries_and_transient_failures(t *testing.T) {
	t.Parallel()
	db := testkit.DynamoDB(t)
	table := testkit.Table(t, db, "idem", "pk")
	r := newReceiver(t, http.StatusServiceUnavailable)
	c, err := lease.New(db, notifier(t, r.URL, r.Secret, 0),
		lease.Config{Config: idempotency.Config{Name: "note-notifier", Table: table, CacheSize: -1}})
	if err != nil {
		t.Fatal(err)
	}
	ev := noteCreated(t, testkit.Name("note-created"), map[string]string{"noteId": "1", "title": "Hello", "content": "x"})
	msg := sqsMessage(t, ev)

	if res, err := c.Apply(context.Background(), ev, sqsbatch.DeliveryOf(msg)); res.Outcome != idempotency.Failed || err == nil || permanent(err) {
		t.Fatalf("delivery while the webhook answers 503 = %+v, %v; want failed, to be retried", res, err)
	}
	r.Answer(http.StatusOK)
	for i, want := range []idempotency.Outcome{idempotency.Applied, idempotency.Duplicate, idempotency.Duplicate} {
		msg.Attributes["ApproximateReceiveCount"] = strconv.Itoa(i + 2)
		if res, err := c.Apply(context.Background(), ev, sqsbatch.DeliveryOf(msg)); err != nil || res.Outcome != want {
			t.Fatalf("delivery %d = %+v, %v; want %s", i+2, res, err, want)
		}
	}
	key := notify.IdempotencyKey(operator.Key("note-notifier", ev.ID))
	got := calls(r)
	if len(got) != 2 || got[0].key != key || got[1].key != key {
		t.Errorf("calls = %+v; want two (503, then 200), both with key %s", got, key)
	}
}

func sqsMessage(t *testing.T, ev cloudevent.Event) events.SQSMessage {
	t.Helper()
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return events.SQSMessage{MessageId: "m-" + ev.ID, Body: string(body), EventSource: "aws:sqs",
		Attributes: map[string]string{"MessageGroupId": ev.Subject, "ApproximateReceiveCount": "1"}}
}
