package idempotency_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// The engine's Retry is the only retry around a commit: a client built with the SDK's default
// retryer (3 attempts per call) makes exactly as many attempts as the engine counts.
func TestCommit_throttling_is_retried_by_the_engine_alone(t *testing.T) {
	for _, tc := range []struct {
		name        string
		throttled   int64
		maxAttempts int
		want        idempotency.Outcome
		attempts    int64
	}{
		{"throttled twice, then committed", 2, 5, idempotency.Applied, 3},
		{"throttled throughout, failed after MaxAttempts", 100, 3, idempotency.Failed, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			var attempts atomic.Int64
			db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(fault.ThrottleFirst("TransactWriteItems", tc.throttled, &attempts)))
			c, err := idempotency.New(db, f.Router(), idempotency.Config{Name: "c", Table: f.Records, CacheSize: -1,
				Retry: idempotency.Retry{MaxAttempts: tc.maxAttempts, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", applytest.Unique(t), "test.counted", applytest.Counted{Counter: applytest.Unique(t), By: 1}))
			if res.Outcome != tc.want {
				t.Fatalf("outcome %s (%v); want %s", res.Outcome, err, tc.want)
			}
			if got := attempts.Load(); got != tc.attempts {
				t.Errorf("%d attempts reached DynamoDB; want %d, all counted by the engine", got, tc.attempts)
			}
			if tc.want == idempotency.Failed && !strings.Contains(err.Error(), "after 3 attempts") {
				t.Errorf("error %q; want it to count the 3 attempts", err)
			}
		})
	}
}
