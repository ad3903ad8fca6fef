package idempotency_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// An event whose handler decides no effect without reading costs no write: it is Ignored,
// acknowledged and counted, with no record and no transaction, on every delivery. Decided from
// a Read, an empty effect is recorded (applied, its redelivery a duplicate): the record pins
// the decision to what was read, which a later delivery might find changed.
func TestConsumer_an_empty_effect_costs_no_write_unless_decided_from_a_read(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		reads   bool
		counted string
		records int
	}{
		{"decided from the event alone", false, metrics.Ignored, 0},
		{"decided from a read", true, metrics.Applied, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requests := &testenv.Requests{}
			db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(requests.Middleware))
			idem, items := testkit.IdempotencyTable(t, db), testkit.Table(t, db, "items", "pk")
			handler := idempotency.HandlerFunc(func(ctx context.Context, _ cloudevent.Event) (idempotency.Effect, error) {
				if tc.reads {
					var item struct{ N int }
					if _, err := idempotency.Read(ctx, items, map[string]string{"pk": "x"}, &item); err != nil {
						return nil, err
					}
				}
				return nil, nil
			})
			c := testkit.NewConsumer(t, db, handler, idempotency.Config{Table: idem}, sqsbatch.Config{})
			ev, err := cloudevent.New("noop-1", "test", "item.seen", "x", time.Now(), struct{}{})
			if err != nil {
				t.Fatal(err)
			}
			body, err := cloudevent.Encode(ev)
			if err != nil {
				t.Fatal(err)
			}
			m := testkit.FIFO("items").Message("x", string(body))
			before := requests.Writes()
			for _, msg := range []string{"first", "again"} {
				if failed := c.Receive(testkit.Batch(m)); len(failed) != 0 {
					t.Fatalf("%s delivery failed", msg)
				}
				m = testkit.Again(m)
			}
			if got, want := requests.Writes()-before, int64(tc.records); got != want {
				t.Errorf("writes: %d (%s); want %d", got, requests, want)
			}
			if got := testenv.Items(t, db, idem); got != tc.records {
				t.Errorf("records: %d; want %d", got, tc.records)
			}
			if got := c.Count(tc.counted); got < 1 {
				t.Errorf("%s counted %v; want at least 1", tc.counted, got)
			}
		})
	}
}
