package dynamodbbatch_test

import (
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/testkit"
)

type account struct {
	PK      string `dynamodbav:"pk"`
	Balance int    `dynamodbav:"balance"`
}

// A change that changes nothing the consumer keeps costs no write: a REMOVE no route handles
// is ignored and counted, not dead-lettered as malformed, and a MODIFY whose image did not
// change (its handler decides no effect) writes neither a record nor a transaction, on its
// first delivery and on a redelivery. A MODIFY that changed the balance is the control: it
// writes its effect and its record in one transaction, and its redelivery is a duplicate.
func TestProcessor_a_change_with_nothing_to_write_is_ignored_and_costs_no_write(t *testing.T) {
	t.Parallel()
	stream := testkit.TableStream("accounts", "pk")
	for _, tc := range []struct {
		name    string
		rec     events.DynamoDBEventRecord
		counted string
		writes  int64 // transactions: a redelivery's meets the record and is a duplicate
		records int
	}{
		{"a REMOVE no route handles", stream.Remove(account{"a1", 5}), metrics.Ignored, 0, 0},
		{"a MODIFY whose image did not change", stream.Modify(account{"a1", 5}, account{"a1", 5}), metrics.Ignored, 0, 0},
		{"a MODIFY that changed the balance", stream.Modify(account{"a1", 5}, account{"a1", 7}), metrics.Applied, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requests := &testenv.Requests{}
			db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(requests.Middleware))
			idem, totals := testkit.IdempotencyTable(t, db), testkit.Table(t, db, "totals", "pk")
			c := testkit.NewDynamoDBConsumer(t, db, balances(totals), idempotency.Config{Table: idem}, dynamodbbatch.Config{})
			before := requests.Writes()
			for delivery := range 2 { // the second: Lambda delivers the batch again
				if again := c.Receive(testkit.DynamoDBBatch(tc.rec)); len(again.Records) != 0 {
					t.Fatalf("delivery %d: reported failed from %s", delivery+1, again.Records[0].Change.SequenceNumber)
				}
			}
			if got := requests.Writes() - before; got != tc.writes {
				t.Errorf("writes: %d (%s); want %d", got, requests, tc.writes)
			}
			if got := c.Count(tc.counted); got < 1 {
				t.Errorf("%s counted %v times; want at least once", tc.counted, got)
			}
			if got := testenv.Items(t, db, idem); got != tc.records {
				t.Errorf("idempotency records: %d; want %d", got, tc.records)
			}
			if dead := c.DeadLetters(); len(dead) != 0 {
				t.Errorf("dead-lettered: %v", dead[0].Reason)
			}
		})
	}
}

// balances keeps each account's balance in table from its inserts and modifies; a modify
// whose image did not change is no effect. It routes no REMOVE.
func balances(table string) *idempotency.Router {
	r := idempotency.NewRouter()
	keep := func(_ cloudevent.Event, ch events.DynamoDBStreamRecord) (idempotency.Effect, error) {
		if ch.OldImage != nil && reflect.DeepEqual(ch.OldImage, ch.NewImage) {
			return nil, nil
		}
		return idempotency.Effect{idempotency.Update(table, map[string]string{"pk": ch.Keys["pk"].String()},
			expression.Set(expression.Name("balance"), expression.Value(ch.NewImage["balance"].Number())))}, nil
	}
	idempotency.Route(r, dynamodbbatch.Insert, keep)
	idempotency.Route(r, dynamodbbatch.Modify, keep)
	return r
}
