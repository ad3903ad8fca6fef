package outbox_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/outbox"
	"github.com/onceflow/onceflow/pkg/publish"
)

// A service writes the event in the same transaction as its entity: either both are stored or
// neither is. A retried request finds the event id in the outbox and writes nothing new.
func ExamplePut() {
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ev, _ := cloudevent.New("order-placed-o1", "shop/api", "order.placed", "o-1", at, map[string]int{"total": 42})
	w, _ := outbox.Put("shop", ev, at)
	fmt.Println(aws.ToString(w.Put.TableName), aws.ToString(w.Put.ConditionExpression))
	// In the service: db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
	//	TransactItems: []types.TransactWriteItem{orderPut, w}})
	// Output: shop attribute_not_exists (#0)
}

// printingSender stands for a *publish.Publisher: it prints what would be sent.
type printingSender struct{}

func (printingSender) SendBatch(_ context.Context, url string, msgs []publish.Message) []error {
	for _, m := range msgs {
		fmt.Printf("send %s/%s to %s\n", m.GroupID, m.DedupID, url)
	}
	return make([]error, len(msgs))
}

// The relay runs on the table's stream: each inserted outbox item is sent to every queue its
// type is routed to, with its event id as deduplication id.
func ExampleRelay_Handle() {
	relay, _ := outbox.NewRelay(outbox.RelayConfig{
		Sender:    printingSender{}, // publish.New(sqs.NewFromConfig(cfg), publish.Config{}) in a function
		Routes:    map[string][]string{"order.placed": {"https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo"}},
		ParkQueue: "https://sqs.eu-west-1.amazonaws.com/123456789012/outbox-parked.fifo", // items SQS refuses
	})
	ev, _ := cloudevent.New("order-placed-o1", "shop/api", "order.placed", "o-1", time.Unix(0, 0), map[string]int{"total": 42})
	item, _ := outbox.NewItem(ev, time.Unix(0, 0))
	img := map[string]events.DynamoDBAttributeValue{
		"kind": events.NewStringAttribute(item.Kind), "eventId": events.NewStringAttribute(item.EventID),
		"eventType": events.NewStringAttribute(item.EventType), "subject": events.NewStringAttribute(item.Subject),
		"body": events.NewStringAttribute(item.Body),
	}
	resp, _ := relay.Handle(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		{EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: "1", NewImage: img}}}})
	fmt.Println(len(resp.BatchItemFailures), "failures")
	// Output:
	// send o-1/order-placed-o1 to https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo
	// 0 failures
}
