package testkit_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A test of a handler against DynamoDB Local: the event, then the redeliveries a consumer
// meets in production (the same message again, the event under a new message id, the event
// after its record expired), each answered without applying the effect again. Write it as a
// test function of your own; it needs DYNAMODB_ENDPOINT (this example is compiled, not run).
func Example() {
	testCountsOnce := func(t *testing.T) {
		db := testkit.DynamoDB(t)
		table := testkit.Table(t, db, "visits", "pk")
		key := map[string]string{"pk": "page#home"}
		handler := idempotency.NewRouter()
		idempotency.Route(handler, "page.visited", func(ev cloudevent.Event, _ struct{}) (idempotency.Effect, error) {
			return idempotency.Effect{idempotency.Update(table, key,
				expression.Add(expression.Name("visits"), expression.Value(1)))}, nil
		})
		clock := testkit.NewClock()
		c := testkit.NewConsumer(t, db, handler, idempotency.Config{Name: "visits", Now: clock.Now}, sqsbatch.Config{})

		ev, err := cloudevent.New("visit-1", "web", "page.visited", "home", clock.Now(), struct{}{})
		if err != nil {
			t.Fatal(err)
		}
		body, err := cloudevent.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		q := testkit.FIFO("visits")
		m := q.Message("home", string(body))
		c.Receive(testkit.Batch(m))
		c.Receive(testkit.Batch(testkit.Again(m))) // SQS redelivers it
		c.Receive(testkit.Batch(q.Resent(m)))      // a publisher's retry: a new message id
		if got := c.Count(metrics.Duplicate); got != 2 {
			t.Errorf("duplicates: %v, want 2", got)
		}
		// Past the retention the record is gone: only a write marked OrDuplicate would keep
		// the event from applying again (see idempotency.Write.OrDuplicate).
		clock.ExpireRecords(idempotency.DefaultRetention)
	}
	_ = testCountsOnce
}
