package localcloud_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The tests share one local cloud of testdata/template.yaml, started on first use. It uses the
// emulators of `make test` (DYNAMODB_ENDPOINT, SQS_ENDPOINT, KINESIS_ENDPOINT) when set, else starts its own;
// names carry a unique prefix so runs never collide.
//
// Its tests run serially, as each disturbs what it uses for the others: a poison record holds its
// stream's shard, the SQS tests count every message of the Notes queue and crash its consumer
// (crashSQSConsumer), the API tests time out and restart Echo's one environment. A test of it may
// run in parallel (t.Parallel, so after every serial test) only while no other parallel test uses
// what it uses: the Notes table's stream (TestStreamPoller_discards_…) and the Clicks stream
// (TestKinesisPoller_discards_…) have one each. Tests on clouds of their own run in parallel.
var shared struct {
	once  sync.Once
	state string
	cloud *localcloud.Cloud
	err   error
}

// crashSQSConsumer, once set, kills the SQS consumer's environment after its next invocation.
var crashSQSConsumer atomic.Bool

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cloud != nil {
		if err := shared.cloud.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "close local cloud:", err)
			code = 1
		}
	}
	if shared.state != "" {
		_ = os.RemoveAll(shared.state)
	}
	os.Exit(code)
}

func cloud(t *testing.T) *localcloud.Cloud {
	t.Helper()
	testkit.SkipShort(t)
	shared.once.Do(func() {
		state, err := os.MkdirTemp("", "localcloud-test-")
		shared.state = state
		if err != nil {
			shared.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		shared.cloud, shared.err = localcloud.Start(ctx, localcloud.Config{
			Template:         "testdata/template.yaml",
			StateDir:         state,
			Install:          true, // the Runtime Interface Emulator, into the user's cache when missing
			Prefix:           fmt.Sprintf("lc%d", time.Now().UnixNano()),
			DynamoDBEndpoint: os.Getenv("DYNAMODB_ENDPOINT"),
			SQSEndpoint:      os.Getenv("SQS_ENDPOINT"),
			KinesisEndpoint:  os.Getenv("KINESIS_ENDPOINT"),
			CrashAfterInvoke: func(function string) bool {
				return function == "SQSConsumer" && crashSQSConsumer.CompareAndSwap(true, false)
			},
		})
	})
	if shared.err != nil {
		t.Fatalf("start the local cloud (run the tests with `make test`, which installs and starts what they need): %v", shared.err)
	}
	return shared.cloud
}
