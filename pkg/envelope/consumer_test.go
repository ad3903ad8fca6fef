package envelope_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/envelope"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

type counterKey struct {
	PK string `dynamodbav:"pk"`
}

// Against DynamoDB Local, with the consumer's cache off so that the record's condition answers:
// for every decoder, the event sent again under a new transport id (a publisher's retried
// PutEvents or Publish, S3 or SQS delivering twice; a CloudEvent re-encoded, 30 as 30.0) is a
// duplicate, and the same key with another payload is a conflict, dead-lettered with a reason
// naming what the consumer keyed on.
func TestDecoders_redelivery_under_a_new_transport_id_is_a_duplicate_and_another_payload_a_conflict(t *testing.T) {
	db := testkit.DynamoDB(t)
	idem := testkit.Table(t, db, "envelope-idem", "pk")
	table := testkit.Table(t, db, "envelope-effects", "pk")
	eb := sample(t, "codepipeline-execution-state-change-event.json")
	sns := sample(t, "sns-sqs-notification.json")
	s3 := sample(t, "s3-event.json")
	ce := func(data string) string {
		b, err := cloudevent.Encode(cloudevent.Event{ID: "order-1001", Source: "shop", Type: "order.placed", Subject: "g1", Data: json.RawMessage(data)})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	snsMessage := func(m map[string]any, order string) {
		m["Message"] = strings.Replace(m["Message"].(string), `"total": 30`, order, 1)
	}
	for _, tc := range []struct {
		name                 string
		d                    sqsbatch.Decoder
		first, again, change string
		keyedOn              string // what the conflict's reason says the consumer keyed on
	}{
		{"cloudevents", envelope.CloudEvents{}, ce(`{"total":30}`), ce(`{"total": 30.0}`), ce(`{"total":31}`), "keys events on the CloudEvents id"},
		{"eventbridge", envelope.EventBridge{Key: []string{"execution-id"}}, eb,
			edit(t, eb, func(m map[string]any) { m["id"], m["time"] = "a-new-event-id", "2017-04-22T03:35:00Z" }),
			edit(t, eb, func(m map[string]any) { m["detail"].(map[string]any)["state"] = "FAILED" }), "keys events on the detail's execution-id"},
		{"sns", envelope.SNS{Key: []string{"orderId"}, TypeField: "kind"}, sns,
			edit(t, sns, func(m map[string]any) { m["MessageId"] = "11111111-2222-3333-4444-555555555555" }),
			edit(t, sns, func(m map[string]any) { snsMessage(m, `"total": 31`) }), "keys events on the message's orderId"},
		{"s3", envelope.S3{}, s3, s3, edit(t, s3, func(m map[string]any) {
			m["Records"].([]any)[0].(map[string]any)["s3"].(map[string]any)["object"].(map[string]any)["size"] = 2048
		}), "keys events on the object version"},
		{"json", envelope.JSON{Key: []string{"orderId"}, Type: "order.placed", GroupField: "customerId"},
			`{"orderId":"o-1","customerId":"c-1","total":30}`, `{"customerId":"c-1","total":30,"orderId":"o-1"}`,
			`{"orderId":"o-1","customerId":"c-1","total":31}`, "keys events on the body's orderId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counter := counterKey{PK: tc.name}
			var emf bytes.Buffer
			var mu sync.Mutex
			var reasons []error
			p, err := sqsbatch.NewConsumer(db, idempotency.HandlerFunc(func(context.Context, cloudevent.Event) (idempotency.Effect, error) {
				return idempotency.Effect{idempotency.Update(table, counter, expression.Add(expression.Name("n"), expression.Value(1)))}, nil
			}), idempotency.Config{Name: "envelope-" + tc.name, Table: idem, CacheSize: -1,
				Metrics: metrics.NewEMF(&emf, "envelope", nil), Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))},
				sqsbatch.Config{Decoder: tc.d,
					Options: batch.Options{DeadLetter: batch.DeadLettererFunc(func(_ context.Context, _ events.SQSMessage, reason error) error {
						mu.Lock()
						defer mu.Unlock()
						reasons = append(reasons, reason)
						return nil
					})}})
			if err != nil {
				t.Fatal(err)
			}
			for i, body := range []string{tc.first, tc.again, tc.change} {
				m := events.SQSMessage{MessageId: "m" + string(rune('1'+i)), Body: body,
					Attributes: map[string]string{"MessageGroupId": "g1", "ApproximateReceiveCount": "1"}}
				resp, err := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}})
				if err != nil || len(resp.BatchItemFailures) != 0 {
					t.Fatalf("message %d: failures %v, %v; want none", i+1, resp.BatchItemFailures, err)
				}
			}
			if n := count(t, db, table, counter); n != 1 {
				t.Errorf("effect applied %d times; want once", n)
			}
			got := emfCounts(t, emf.String())
			for name, want := range map[string]float64{metrics.Applied: 1, metrics.Duplicate: 1, metrics.Conflict: 1, metrics.DeadLettered: 1} {
				if got[name] != want {
					t.Errorf("metric %s = %v; want %v (all: %v)", name, got[name], want, got)
				}
			}
			if len(reasons) != 1 || !errors.Is(reasons[0], idempotency.ErrConflict) || !strings.Contains(reasons[0].Error(), tc.keyedOn) {
				t.Errorf("dead-letter reasons %v; want one conflict saying the consumer %s", reasons, tc.keyedOn)
			}
		})
	}
}

func count(t *testing.T, db *dynamodb.Client, table string, key counterKey) int {
	t.Helper()
	k, err := attributevalue.MarshalMap(key)
	if err != nil {
		t.Fatal(err)
	}
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ N int }
	if err := attributevalue.UnmarshalMap(out.Item, &v); err != nil {
		t.Fatal(err)
	}
	return v.N
}

func emfCounts(t *testing.T, out string) map[string]float64 {
	t.Helper()
	counts := map[string]float64{}
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		for _, name := range []string{metrics.Applied, metrics.Duplicate, metrics.Conflict, metrics.DeadLettered, metrics.Malformed} {
			if n, ok := m[name].(float64); ok {
				counts[name] += n
			}
		}
	}
	return counts
}

// A decoder's error that is not permanent (a lookup that timed out) fails the message, which is
// received again; it is neither dead-lettered nor counted malformed.
func TestConsumer_a_transient_decoder_error_fails_the_message_for_redelivery(t *testing.T) {
	db := testkit.DynamoDB(t)
	var emf bytes.Buffer
	dead := 0
	p, err := sqsbatch.NewConsumer(db, idempotency.NewRouter(), idempotency.Config{Name: "envelope-transient", Table: "unused",
		Metrics: metrics.NewEMF(&emf, "envelope", nil), Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))},
		sqsbatch.Config{
			Decoder: envelope.Func(func(context.Context, events.SQSMessage) (cloudevent.Event, error) {
				return cloudevent.Event{}, errors.New("schema registry: timeout")
			}),
			Options: batch.Options{DeadLetter: batch.DeadLettererFunc(func(context.Context, events.SQSMessage, error) error { dead++; return nil })}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: "{}"}}})
	if err != nil || len(resp.BatchItemFailures) != 1 || dead != 0 {
		t.Fatalf("Handle = %+v, %v, %d dead-lettered; want the message failed, not dead-lettered", resp, err, dead)
	}
	if got := emfCounts(t, emf.String()); got[metrics.Malformed] != 0 {
		t.Errorf("metrics %v; want nothing counted malformed", got)
	}
}
