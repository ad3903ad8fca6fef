package localcloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// orderFunction records the data of every record it is given, in delivery order, and takes
// slow to answer a batch holding the record "slow".
type orderFunction struct {
	mu   sync.Mutex
	seen []string
	slow time.Duration
}

func (f *orderFunction) Invoke(_ context.Context, _ string, payload []byte) ([]byte, error) {
	var ev events.KinesisEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	for _, r := range ev.Records {
		if string(r.Kinesis.Data) == "slow" {
			time.Sleep(f.slow)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range ev.Records {
		f.seen = append(f.seen, string(r.Kinesis.Data))
	}
	return nil, nil
}

func (f *orderFunction) snapshot() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

// activeStream creates a kinesalite stream of one shard and waits until it is ACTIVE.
func activeStream(t *testing.T, client *kinesis.Client) (name, arn string) {
	t.Helper()
	ctx := context.Background()
	name = fmt.Sprintf("reshard-%d", time.Now().UnixNano())
	if _, err := client.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(1)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteStream(context.Background(), &kinesis.DeleteStreamInput{StreamName: aws.String(name)})
	})
	out, err := kinesis.NewStreamExistsWaiter(client, func(o *kinesis.StreamExistsWaiterOptions) { o.MinDelay = 50 * time.Millisecond }).
		WaitForOutput(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String(name)}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return name, aws.ToString(out.StreamDescription.StreamARN)
}

// After a shard split, a partition key's records in the child shard are delivered only after
// those in the parent, however slow the parent's batch is, as Lambda finishes a parent first.
func TestKinesisPoller_delivers_a_child_shard_after_its_parent(t *testing.T) {
	t.Parallel()
	ep := kinesisEndpoint(t)
	client := localcloud.Endpoints{Kinesis: ep}.KinesisClient()
	ctx := context.Background()
	name, arn := activeStream(t, client)
	put := func(data ...string) {
		t.Helper()
		for _, d := range data {
			if _, err := client.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String(name), PartitionKey: aws.String("k"),
				Data: []byte(d)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("slow", "b")
	if _, err := client.SplitShard(ctx, &kinesis.SplitShardInput{StreamName: aws.String(name), ShardToSplit: aws.String("shardId-000000000000"),
		NewStartingHashKey: aws.String("170141183460469231731687303715884105728")}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, func() error {
		out, err := client.DescribeStream(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String(name)})
		if err != nil {
			return err
		}
		if s := out.StreamDescription.StreamStatus; s != "ACTIVE" {
			return fmt.Errorf("stream %s", s)
		}
		return nil
	})
	put("c", "d")
	fn := &orderFunction{slow: 1500 * time.Millisecond}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := localcloud.RunKinesisPoller(runCtx, client, name, arn, 10, localcloud.StreamOptions{MaxRecordAge: -1}, fn); err != nil {
		t.Fatal(err)
	}
	want := []string{"slow", "b", "c", "d"}
	testkit.Eventually(t, 30*time.Second, func() error {
		if got := fn.snapshot(); len(got) < len(want) {
			return fmt.Errorf("delivered %v; want %v", got, want)
		}
		return nil
	})
	if got := fn.snapshot(); !slices.Equal(got, want) {
		t.Errorf("delivered %v; want the parent's records before the child's, each once: %v", got, want)
	}
}
