package testkit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// orderPlaced is the data of order.placed as its consumer was written: version 1.
type orderPlaced struct {
	OrderID string `json:"orderId"`
	Total   int    `json:"total"`
}

// Validate makes the fields version 1 requires required.
func (o orderPlaced) Validate() error {
	switch {
	case o.OrderID == "":
		return cloudevent.Malformed("data.orderId", "missing")
	case o.Total <= 0:
		return cloudevent.Malformed("data.total", "is %d; want a positive amount", o.Total)
	}
	return nil
}

// v1 is the body of version 1 of order.placed for order id: extra is put in the envelope (an
// attribute a later version adds), data is the event's data, {"orderId":id,"total":42} when "".
func v1(id, typ, extra, data string) string {
	if data == "" {
		data = `{"orderId":"` + id + `","total":42}`
	}
	return `{"specversion":"1.0","id":"` + id + `-placed","source":"shop","type":"` + typ + `","subject":"` + id + `",` +
		`"time":"2026-11-30T10:00:00Z",` + extra + `"datacontenttype":"application/json","data":` + data + `}`
}

// eventChanges are the changes of an event that docs/producers.md lists, each as the bodies a
// producer sends (the change's id is the order id) and what the consumer built for version 1
// answers to each: "applied", "duplicate", "ignored", "conflict", or "malformed <field>"
// (dead-lettered with the field named). strict builds the consumer with idempotency.Strict.
// TestDocs_producers_md_lists_every_event_change checks the page's table against it.
var eventChanges = []struct {
	change string
	strict bool
	bodies func(id string) []string
	want   []string
}{
	{change: "add a field to the data", bodies: func(id string) []string {
		return []string{v1(id, "order.placed", "", `{"orderId":"`+id+`","total":42,"coupon":"WELCOME","lines":[{"sku":"a"}]}`)}
	}, want: []string{"applied"}},
	{change: "add an extension attribute", bodies: func(id string) []string {
		return []string{v1(id, "order.placed", `"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","channel":{"web":true},`, "")}
	}, want: []string{"applied"}},
	{change: "send the same event again with an extension attribute added", bodies: func(id string) []string {
		return []string{v1(id, "order.placed", "", ""), v1(id, "order.placed", `"traceparent":"00-1-2-01",`, "")}
	}, want: []string{"applied", "duplicate"}},
	{change: "add a new event type", bodies: func(id string) []string {
		return []string{v1(id, "order.gift-wrapped", "", "")}
	}, want: []string{"ignored"}},
	{change: "add parameters to datacontenttype", bodies: func(id string) []string {
		return []string{strings.Replace(v1(id, "order.placed", "", ""), `"application/json"`, `"Application/JSON; charset=utf-8"`, 1)}
	}, want: []string{"applied"}},
	{change: "rename the event type", bodies: func(id string) []string {
		return []string{v1(id, "order.created", "", "")}
	}, want: []string{"ignored"}},
	{change: "rename a required field", bodies: func(id string) []string {
		return []string{v1(id, "order.placed", "", `{"order_id":"`+id+`","total":42}`)}
	}, want: []string{"malformed data.orderId"}},
	{change: "remove a required field", bodies: func(id string) []string {
		return []string{v1(id, "order.placed", "", `{"orderId":"`+id+`"}`)}
	}, want: []string{"malformed data.total"}},
	{change: "change a field's type", bodies: func(id string) []string {
		return []string{v1(id, "order.placed", "", `{"orderId":"`+id+`","total":"42"}`)}
	}, want: []string{"malformed data.total"}},
	{change: "reuse an event id for another payload", bodies: func(id string) []string {
		return []string{v1(id, "order.placed", "", ""), v1(id, "order.placed", "", `{"orderId":"`+id+`","total":42,"coupon":"WELCOME"}`)}
	}, want: []string{"applied", "conflict"}},
	{change: "change datacontenttype to another media type", bodies: func(id string) []string {
		return []string{strings.Replace(v1(id, "order.placed", "", ""), `"application/json"`, `"application/xml"`, 1)}
	}, want: []string{"malformed datacontenttype"}},
	{change: "write a member twice", bodies: func(id string) []string {
		return []string{v1(id, "order.placed", "", `{"orderId":"`+id+`","total":42,"total":43}`)}
	}, want: []string{"malformed data.total"}},
	{change: "send bytes that are not UTF-8", bodies: func(id string) []string {
		return []string{v1(id, "order.placed", `"note":"caf`+"\xe9"+`",`, "")}
	}, want: []string{"malformed note"}},
	{change: "add a field to the data, for a strict consumer", strict: true, bodies: func(id string) []string {
		return []string{v1(id, "order.placed", "", `{"orderId":"`+id+`","total":42,"coupon":"WELCOME"}`)}
	}, want: []string{"malformed data"}},
	{change: "add a new event type, for a strict consumer", strict: true, bodies: func(id string) []string {
		return []string{v1(id, "order.gift-wrapped", "", "")}
	}, want: []string{"malformed type"}},
}

// A consumer written for version 1 of order.placed, its groups held behind a dead letter
// (HoldGroup), meets each change of the event a producer may make (docs/producers.md): what
// is compatible is applied, or acknowledged (a duplicate, an ignored type), and its group goes
// on; what is not is dead-lettered with the field named, and holds its group. The order is
// written once, with version 1's fields, when an event is applied.
func TestConsumer_built_for_version_1_meets_each_change_of_its_event(t *testing.T) {
	t.Parallel()
	db := testkit.DynamoDB(t)
	orders := testkit.Table(t, db, "orders", "pk")
	for _, tc := range eventChanges {
		t.Run(tc.change, func(t *testing.T) {
			t.Parallel()
			var opts []idempotency.RouteOption
			if tc.strict {
				opts = append(opts, idempotency.Strict())
			}
			r := idempotency.NewRouter(opts...)
			idempotency.Route(r, "order.placed", func(_ cloudevent.Event, o orderPlaced) (idempotency.Effect, error) {
				return idempotency.Effect{idempotency.Update(orders, map[string]string{"pk": o.OrderID},
					expression.Add(expression.Name("placed"), expression.Value(o.Total)))}, nil
			})
			c := testkit.NewConsumer(t, db, r, idempotency.Config{Name: "orders", AfterDeadLetter: idempotency.HoldGroup}, sqsbatch.Config{})
			id := testkit.Name("o")
			q := testkit.FIFO("orders")
			applied := 0
			for i, body := range tc.bodies(id) {
				got := receive(t, c, q.Message(id, body))
				if got != tc.want[i] {
					t.Fatalf("body %d: %s; want %s", i+1, got, tc.want[i])
				}
				if got == "applied" {
					applied += 42
				}
			}
			if got := placed(t, db, orders, id); got != applied {
				t.Errorf("order placed %d; want %d", got, applied)
			}
			next := v1(id+"-next", "order.placed", "", "")
			held := strings.HasPrefix(tc.want[len(tc.want)-1], "malformed") || tc.want[len(tc.want)-1] == "conflict"
			if got := receive(t, c, q.Message(id, next)); held != (got == "held") || !held && got != "applied" {
				t.Errorf("the group's next event: %s; want it held %v, else applied", got, held)
			}
		})
	}
}

// receive hands c a batch of m and says what became of it: the outcome counted ("applied",
// "duplicate", "ignored"), or, dead-lettered, "malformed <the field named>", "conflict", or
// "held" (behind its group's hold).
func receive(t *testing.T, c *testkit.Consumer, m events.SQSMessage) string {
	t.Helper()
	counted := []string{metrics.Applied, metrics.Duplicate, metrics.Ignored, metrics.Malformed, metrics.Conflict}
	before := map[string]float64{}
	for _, name := range counted {
		before[name] = c.Count(name)
	}
	dead := len(c.DeadLetters())
	if failed := c.Receive(testkit.Batch(m)); len(failed) != 0 {
		t.Fatalf("the message was reported failed, to be delivered again: %v", failed)
	}
	var outcome string
	for _, name := range counted {
		if c.Count(name) > before[name] {
			outcome += strings.ToLower(name)
		}
	}
	letters := c.DeadLetters()[dead:]
	var me *cloudevent.MalformedError
	switch {
	case len(letters) == 0 && outcome != metrics.Malformed && outcome != metrics.Conflict:
		return outcome
	case len(letters) != 1:
		t.Fatalf("%d dead letters, outcome %q; want one dead letter", len(letters), outcome)
	case errors.Is(letters[0].Reason, idempotency.ErrHeld):
		return "held"
	case outcome == "malformed" && errors.As(letters[0].Reason, &me):
		return "malformed " + me.Field
	case outcome == "conflict" && errors.Is(letters[0].Reason, idempotency.ErrConflict):
		return "conflict"
	}
	return fmt.Sprintf("%s, dead-lettered: %v", outcome, letters[0].Reason)
}

// placed is the sum of the totals applied to order id.
func placed(t *testing.T, db *dynamodb.Client, table, id string) int {
	t.Helper()
	out, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}}})
	if err != nil {
		t.Fatal(err)
	}
	var item struct{ Placed int }
	if err := attributevalue.UnmarshalMap(out.Item, &item); err != nil {
		t.Fatal(err)
	}
	return item.Placed
}
