package idempotency_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

// A LeasedConsumer runs an effect outside DynamoDB (here a print standing for an HTTP call)
// under a fenced lease. In a Lambda function it goes behind an SQS batch processor:
// sqsbatch.NewFor(c, sqsbatch.Config{...}).
func ExampleNewLeased() {
	var db *dynamodb.Client // dynamodb.NewFromConfig(cfg), built once at init
	call := idempotency.SideEffectFunc(func(ctx context.Context, ev cloudevent.Event, key string) error {
		fmt.Println("POST with Idempotency-Key", key) // pass the key downstream
		return nil
	})
	c, err := idempotency.NewLeased(db, call, idempotency.LeaseConfig{
		Config:    idempotency.Config{Name: "note-notifier", Table: "idempotency"},
		Lease:     30 * time.Second, // default: the invocation's remaining time plus a margin
		Heartbeat: 10 * time.Second, // extends the lease while the call runs
	})
	if err != nil {
		panic(err)
	}
	_ = c
}
