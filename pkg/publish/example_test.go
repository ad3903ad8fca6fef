package publish_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/publish"
)

// printingSQS stands for *sqs.Client: it prints what would be sent and accepts it.
type printingSQS struct{}

func (printingSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	fmt.Println("send", aws.ToString(in.MessageGroupId), aws.ToString(in.MessageDeduplicationId))
	return &sqs.SendMessageOutput{}, nil
}

func (printingSQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	fmt.Print("batch:")
	for _, e := range in.Entries {
		fmt.Print(" ", aws.ToString(e.MessageGroupId), "/", aws.ToString(e.MessageDeduplicationId))
	}
	fmt.Println()
	return &sqs.SendMessageBatchOutput{Successful: make([]types.SendMessageBatchResultEntry, len(in.Entries))}, nil
}

// Events are published with their id as deduplication id and their subject as group: a retry
// of the same event, by the publisher or its caller, is dropped by the queue. At most one
// message per group goes in one batch, so a failed entry is never overtaken by a later one of
// its group.
func ExamplePublisher_Publish() {
	p, _ := publish.New(printingSQS{}, publish.Config{})
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	placed, _ := cloudevent.New("order-placed-o1", "shop/api", "order.placed", "o-1", at, map[string]int{"total": 42})
	paid, _ := cloudevent.New("order-paid-o1", "shop/api", "order.paid", "o-1", at, map[string]int{"total": 42})
	other, _ := cloudevent.New("order-placed-o2", "shop/api", "order.placed", "o-2", at, map[string]int{"total": 7})
	err := p.Publish(context.Background(), "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo", placed, other, paid)
	fmt.Println(err)
	// Output:
	// batch: o-1/order-placed-o1 o-2/order-placed-o2
	// batch: o-1/order-paid-o1
	// <nil>
}
