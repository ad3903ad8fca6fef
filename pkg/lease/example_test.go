package lease_test

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/lease"
)

// A Consumer runs an effect outside DynamoDB (here a print standing for an HTTP call) under a
// fenced lease. In a Lambda function it goes behind an SQS batch processor:
// sqsbatch.NewFor(c.Engine(), sqsbatch.Config{...}).
func ExampleNew() {
	var db *dynamodb.Client // dynamodb.NewFromConfig(cfg), built once at init
	call := lease.SideEffectFunc(func(ctx context.Context, ev cloudevent.Event, key string) error {
		fmt.Println("POST with Idempotency-Key", key) // pass the key downstream
		return nil
	})
	c, err := lease.New(db, call, lease.Config{
		Config:    idempotency.Config{Name: "note-notifier", Table: "idempotency"},
		Lease:     30 * time.Second, // default: the invocation's remaining time plus a margin
		Heartbeat: 10 * time.Second, // extends the lease while the call runs
	})
	if err != nil {
		panic(err)
	}
	_ = c
}
