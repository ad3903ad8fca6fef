package outbox_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// outboxRecord is the stream record of an outbox item inserted with body, shaped by hand: an
// item past DynamoDB's 400 KB cannot be written to DynamoDB Local, but a stream record of
// another source (or a future limit) could carry one.
func outboxRecord(seq, id, subject, body string) events.DynamoDBEventRecord {
	s := events.NewStringAttribute
	return events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: seq,
		NewImage: map[string]events.DynamoDBAttributeValue{"pk": s("OUTBOX#" + subject), "sk": s(id), "kind": s(outbox.Kind),
			"eventId": s(id), "eventType": s("note.created"), "subject": s(subject), "body": s(body)}}}
}

// A body SQS refuses for its size is parked, not retried: the relay checks the size as SQS
// does. The parked message leaves the body out when it would not fit SQS either, and says so.
func TestRelay_parks_an_item_whose_body_is_past_SQSs_limit(t *testing.T) {
	t.Parallel()
	q := newQueues(t)
	big := `{"specversion":"1.0","id":"big","source":"x","type":"note.created","subject":"n-big","data":"` +
		strings.Repeat("b", publish.MaxMessageBytes) + `"}`
	small := `{"specversion":"1.0","id":"small","source":"x","type":"note.created","subject":"n-small","data":"s"}`
	recs := []events.DynamoDBEventRecord{outboxRecord("100", "big", "n-big", big), outboxRecord("200", "small", "n-small", small)}
	relay := newRelay(t, q.client, q.routes(), func(c *outbox.RelayConfig) { c.ParkQueue = q.parked })
	resp, err := relay.Handle(context.Background(), events.DynamoDBEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v, err %v; want none: the item SQS refuses for its size is parked, not retried", resp.BatchItemFailures, err)
	}
	if got := received(t, q, q.notes); len(got) != 1 || got[0] != "n-small/small" {
		t.Fatalf("notes queue received %v; want only the small event", got)
	}
	parked := testkit.Drain(t, q.client, q.parked)
	if len(parked) != 1 {
		t.Fatalf("park queue holds %d messages; want the item too large for SQS", len(parked))
	}
	var p outbox.Parked
	if err := json.Unmarshal([]byte(aws.ToString(parked[0].Body)), &p); err != nil {
		t.Fatal(err)
	}
	if p.EventID != "big" || p.SequenceNumber != "100" || !strings.Contains(p.Reason, "1048576") ||
		!strings.Contains(p.Reason, "body left out") || p.Body != "" {
		t.Fatalf("parked %+v (body %d bytes); want the event, the size as the reason, the body left out", p, len(p.Body))
	}
}
