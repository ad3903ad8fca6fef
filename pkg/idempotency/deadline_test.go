package idempotency_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// A DynamoDB endpoint that accepts connections and never answers: a hung request.
func blackHole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	return "http://" + l.Addr().String()
}

func TestConsumer_a_hung_commit_gives_up_before_the_invocation_deadline(t *testing.T) {
	t.Parallel()
	db := dynamodb.NewFromConfig(testkit.Config(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(blackHole(t))
		o.RetryMaxAttempts = 1
	})
	f := &fixture{&applytest.Fixture{App: "app", Records: "records"}}
	const margin = 400 * time.Millisecond
	c, err := idempotency.New(db, f.Router(), idempotency.Config{Name: "c", Table: f.Records, CacheSize: -1,
		Retry: idempotency.Retry{Margin: margin}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	res, err := applytest.Process(ctx, c, applytest.Message(t, "m", "ev", "test.counted", applytest.Counted{Counter: "x", By: 1}))
	if res.Outcome != idempotency.Failed || err == nil || idempotency.IsPermanent(err) {
		t.Fatalf("Process = %+v, %v; want a transient failure", res, err)
	}
	if left := time.Until(deadline); left < margin/2 {
		t.Errorf("Process returned %v before the deadline; want about the retry margin %v left to report the failure", left, margin)
	}
}
