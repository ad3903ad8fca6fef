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
		name string
		rec  events.DynamoDBEventRecord
		want testenv.Written // a redelivery's transaction meets the record: a duplicate
	}{
		{"a REMOVE no route handles", stream.Remove(account{"a1", 5}), testenv.Written{Counted: metrics.Ignored}},
		{"a MODIFY whose image did not change", stream.Modify(account{"a1", 5}, account{"a1", 5}), testenv.Written{Counted: metrics.Ignored}},
		{"a MODIFY that changed the balance", stream.Modify(account{"a1", 5}, account{"a1", 7}), testenv.Written{Counted: metrics.Applied, Writes: 2, Records: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testenv.StreamWrites(t, func(db *dynamodb.Client, idem, totals string) *testkit.StreamConsumer[events.DynamoDBEvent] {
				return testkit.NewDynamoDBConsumer(t, db, balances(totals), idempotency.Config{Table: idem}, dynamodbbatch.Config{})
			}, testkit.DynamoDBBatch(tc.rec), func(ev events.DynamoDBEvent) int { return len(ev.Records) }, tc.want)
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
