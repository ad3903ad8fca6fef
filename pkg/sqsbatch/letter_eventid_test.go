package sqsbatch_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/envelope"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A letter the engine writes names the event id it decoded (deadletter.AttrEventID), which
// the body does not show when the decoder keys by a business key: an EventBridge envelope's
// own id is new on every publish. An operator's tool (dlq discard) records that id.
func TestProcessor_a_dead_letter_names_the_decoded_event_id(t *testing.T) {
	t.Parallel()
	c := testkit.SQS(t)
	out, err := c.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(testkit.Name("dlqURL") + ".fifo"),
		Attributes: map[string]string{string(sqstypes.QueueAttributeNameFifoQueue): "true"}})
	if err != nil {
		t.Fatal(err)
	}
	dlqURL := aws.ToString(out.QueueUrl)
	r := newRedrive(t)
	p, err := sqsbatch.NewConsumer(r.db, r, idempotency.Config{Name: "ledger", Table: testkit.Table(t, r.db, "idem", "pk")},
		sqsbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(c, dlqURL)}, Decoder: envelope.EventBridge{Key: []string{"movementId"}}})
	if err != nil {
		t.Fatal(err)
	}
	body := func(ebID, amount string) string {
		return `{"version":"0","id":"` + ebID + `","detail-type":"account.credited","source":"bank","account":"1","time":"2026-12-01T10:00:00Z","region":"us-east-1","resources":[],"detail":{"movementId":"mv-1","amount":"` + amount + `"}}`
	}
	msg := func(id, b string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, Body: b, EventSourceARN: fifoARN, Attributes: map[string]string{"MessageGroupId": "acct-1", "ApproximateReceiveCount": "1"}}
	}
	// mv-1 applied, then published again with another payload: a conflict, dead-lettered.
	resp := handle(t, p, t.Context(), events.SQSEvent{Records: []events.SQSMessage{msg("m-1", body("eb-1", "10")), msg("m-2", body("eb-2", "20"))}})
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v; want m-1 applied and m-2 dead-lettered", resp.BatchItemFailures)
	}
	var got []deadletter.Letter
	if err := dlq.Browse(t.Context(), c, dlqURL, func(l deadletter.Letter) bool { got = append(got, l); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].SourceMessage != "m-2" {
		t.Fatalf("letters %+v; want m-2's", got)
	}
	if l := got[0]; l.DecodedEventID != "mv-1" || l.EventID != "mv-1" || !strings.Contains(l.Reason, "mv-1") {
		t.Errorf("letter names event %q (decoded %q), reason %q; want mv-1, the business key, not the envelope's eb-2", l.EventID, l.DecodedEventID, l.Reason)
	}
}
