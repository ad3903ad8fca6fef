package dlq_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

// Redrive moves the letters of one event type back to the queues they were dead-lettered
// from, in order, and reports each.
func ExampleRedrive() {
	ctx := context.Background()
	var client *sqs.Client // sqs.NewFromConfig(cfg)
	err := dlq.Redrive(ctx, dlq.RedriveConfig{
		Client: client,
		Queue:  "https://sqs.eu-west-1.amazonaws.com/123456789012/ledger-dlq.fifo",
		Filter: dlq.Filter{EventType: "account.credited"},
	}, func(r dlq.Redriven) {
		fmt.Println(r.Outcome, r.Letter.EventID, r.Err)
	})
	if err != nil {
		fmt.Println(err)
	}
}
