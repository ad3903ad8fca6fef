package idempotency_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// A handler's read that DynamoDB throttles is retried under Config.Retry, as every other call
// of the engine's is: a throttle or two on a hot item does not fail the message.
func TestRead_throttled_is_retried(t *testing.T) {
	f := newReadFixture(t, 0)
	f.putStock(t, "cog", 10, 0)
	var attempts atomic.Int64
	through := *f.Fixture
	through.DB = testkit.DynamoDB(t, dynamodb.WithAPIOptions(fault.ThrottleFirst("GetItem", 2, &attempts)))
	c := through.ConsumerFor(t, "reserve", f.h.router())
	id := applytest.Unique(t)
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "stock.reserve", reserve{Item: "cog", Quantity: 1}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("outcome %s, %v; want applied after the read's throttles", res.Outcome, err)
	}
	if got := attempts.Load(); got != 3 {
		t.Errorf("%d attempts of the read; want 3 (2 throttled)", got)
	}
	if s, _ := f.stock(t, "cog"); s.Reserved != 1 {
		t.Errorf("reserved %d, want 1", s.Reserved)
	}
}
