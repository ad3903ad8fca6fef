package kinesisbatch_test

import (
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A record that changes nothing the consumer keeps costs no write, on its first delivery and
// on a redelivery: a CloudEvent of a type no route handles is ignored and counted, not
// dead-lettered as malformed, and a record whose handler decides no effect writes neither a
// record nor a transaction. A record of an amount is the control: it writes its effect and
// its record in one transaction, and its redelivery is a duplicate. The records are
// kinesalite's.
func TestProcessor_a_record_with_nothing_to_write_is_ignored_and_costs_no_write(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		data    []byte
		decoder kinesisbatch.DecoderFunc
		want    testenv.Written // a redelivery's transaction meets the record: a duplicate
	}{
		{"a CloudEvent of a type no route handles", refund(t), kinesisbatch.CloudEventData, testenv.Written{Counted: metrics.Ignored}},
		{"a record of no effect", []byte(`{"item":"a","n":0}`), kinesisbatch.RecordEvent, testenv.Written{Counted: metrics.Ignored}},
		{"a record of an amount", []byte(`{"item":"a","n":5}`), kinesisbatch.RecordEvent, testenv.Written{Counted: metrics.Applied, Writes: 2, Records: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStream(t)
			s.put(t, "a", tc.data)
			testenv.StreamWrites(t, func(db *dynamodb.Client, idem, totals string) *testkit.StreamConsumer[events.KinesisEvent] {
				return testkit.NewKinesisConsumer(t, db, amounts(totals), idempotency.Config{Table: idem}, kinesisbatch.Config{Decoder: tc.decoder})
			}, testkit.KinesisBatch(s.records(t)...), func(ev events.KinesisEvent) int { return len(ev.Records) }, tc.want)
		})
	}
}

// amounts adds each record's amount to its item's total in table; an amount of 0 is no
// effect. It routes the records' own type and "amount.added", no other.
func amounts(table string) *idempotency.Router {
	r := idempotency.NewRouter()
	add := func(_ cloudevent.Event, a amount) (idempotency.Effect, error) {
		if a.N == 0 {
			return nil, nil
		}
		return idempotency.Effect{idempotency.Update(table, map[string]string{"pk": a.Item},
			expression.Add(expression.Name("total"), expression.Value(a.N)))}, nil
	}
	idempotency.Route(r, kinesisbatch.RecordType, add)
	idempotency.Route(r, "amount.added", add)
	return r
}

// refund is a structured CloudEvent of type amount.refunded.
func refund(t *testing.T) []byte {
	t.Helper()
	ev, err := cloudevent.New("refund-1", "test", "amount.refunded", "a", time.Now(), amount{Item: "a", N: 5})
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return body
}
