package envelope_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/envelope"
)

// An EventBridge rule targets the queue. The key is the detail's order id and event kind: a
// publisher that retries PutEvents sends a new event id, which must not make the order count
// twice. In a consumer: sqsbatch.Config{Decoder: decoder}.
func ExampleEventBridge() {
	decoder := envelope.EventBridge{Key: []string{"orderId", "kind"}, GroupField: "customerId"}
	for _, id := range []string{"first-put-events", "retried-put-events"} {
		ev, err := decoder.Decode(context.Background(), events.SQSMessage{Body: `{"version":"0","id":"` + id + `",
			"detail-type":"Order Placed","source":"shop.orders","time":"2026-12-01T10:00:00Z",
			"detail":{"orderId":"o-1001","kind":"placed","customerId":"c-7","total":30}}`})
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.ID, ev.Type, ev.Subject, ev.PayloadHash()[:12])
	}
	// Output:
	// o-1001/placed Order Placed c-7 c968f98fd15a
	// o-1001/placed Order Placed c-7 c968f98fd15a
}

// Plain JSON from your own service: the key, type and group are fields you name.
func ExampleJSON() {
	decoder := envelope.JSON{Key: []string{"payment.reference"}, TypeField: "event", GroupField: "account", Source: "payments"}
	ev, err := decoder.Decode(context.Background(), events.SQSMessage{
		Body: `{"event":"payment.settled","account":"acc-9","payment":{"reference":"PAY-77","amount":1250}}`})
	if err != nil {
		panic(err)
	}
	fmt.Println(ev.ID, ev.Type, ev.Subject, string(ev.Data))
	// Output:
	// PAY-77 payment.settled acc-9 {"account":"acc-9","event":"payment.settled","payment":{"amount":1250,"reference":"PAY-77"}}
}
