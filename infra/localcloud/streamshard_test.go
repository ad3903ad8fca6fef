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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// shardFunction stands for a stream function: it records what it saw, per partition key, and
// fails every record of the partition key "blocked" (and, as Lambda requires, every later one
// of the batch) while blocked is set.
type shardFunction struct {
	mu       sync.Mutex
	seen     map[string][]string // pk → sk in delivery order
	blocked  bool
	overlaps int // invocations that started while another was running
	running  int
}

func (f *shardFunction) Invoke(_ context.Context, _ string, payload []byte) ([]byte, error) {
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.running++
	if f.running > 1 {
		f.overlaps++
	}
	f.mu.Unlock()
	time.Sleep(20 * time.Millisecond) // long enough for another shard's invocation to overlap
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running--
	var resp events.DynamoDBEventResponse
	for _, r := range ev.Records {
		pk, sk := r.Change.Keys["pk"].String(), r.Change.Keys["sk"].String()
		if len(resp.BatchItemFailures) > 0 || (f.blocked && pk == "blocked") {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
			continue
		}
		f.seen[pk] = append(f.seen[pk], sk)
	}
	return json.Marshal(resp)
}

func (f *shardFunction) snapshot() (map[string][]string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]string{}
	for k, v := range f.seen {
		out[k] = slices.Clone(v)
	}
	return out, f.overlaps
}

func TestStreamPoller_virtual_shards_keep_each_partition_key_in_order_and_run_concurrently(t *testing.T) {
	t.Parallel()
	db := testkit.DynamoDB(t)
	table, arn := testkit.StreamTable(t, db, "app")
	keys := []string{"blocked", "a", "b", "c", "d", "e", "f", "g"}
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("%02d", i))
		for _, pk := range keys {
			if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: want[i]}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	fn := &shardFunction{seen: map[string][]string{}, blocked: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := localcloud.RunStreamPoller(ctx, testkit.Streams(t), arn, 4, 3, fn); err != nil {
		t.Fatal(err)
	}
	// While "blocked" keeps failing, the keys of the other virtual shards flow; then it is
	// unblocked and delivered, in order, from its first record.
	deadline := time.Now().Add(30 * time.Second)
	var seen map[string][]string
	var flowing int
	for time.Now().Before(deadline) {
		seen, _ = fn.snapshot()
		flowing = 0
		for _, pk := range keys[1:] {
			if len(seen[pk]) == len(want) {
				flowing++
			}
		}
		if flowing >= 4 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(seen["blocked"]) != 0 || flowing < 4 {
		t.Fatalf("while one key failed: delivered %v; want it held back and the keys of other shards delivered", seen)
	}
	fn.mu.Lock()
	fn.blocked = false
	fn.mu.Unlock()
	var overlaps int
	for time.Now().Before(deadline.Add(30 * time.Second)) {
		seen, overlaps = fn.snapshot()
		done := 0
		for _, pk := range keys {
			if len(seen[pk]) >= len(want) {
				done++
			}
		}
		if done == len(keys) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, pk := range keys {
		if !slices.Equal(seen[pk], want) {
			t.Errorf("key %s delivered %v; want each record once, in write order %v", pk, seen[pk], want)
		}
	}
	if overlaps == 0 {
		t.Error("no invocation overlapped another: virtual shards are not delivered concurrently")
	}
}
