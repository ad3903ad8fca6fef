package localcloud_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kintypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// kinesisScript answers its first invocation as told (a partial batch response naming the
// record whose data is fail, or a function error) and every later one with success; it records
// the data of every batch it was given.
type kinesisScript struct {
	mu      sync.Mutex
	fail    string
	fnErr   bool
	batches [][]string
}

func (f *kinesisScript) Invoke(_ context.Context, _ string, payload []byte) ([]byte, error) {
	var ev events.KinesisEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var data []string
	var resp events.KinesisEventResponse
	for _, r := range ev.Records {
		data = append(data, string(r.Kinesis.Data))
		if len(f.batches) == 0 && string(r.Kinesis.Data) == f.fail {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.KinesisBatchItemFailure{ItemIdentifier: r.Kinesis.SequenceNumber})
		}
	}
	first := len(f.batches) == 0
	f.batches = append(f.batches, data)
	if first && f.fnErr {
		return nil, errors.New("function error")
	}
	return json.Marshal(resp)
}

func (f *kinesisScript) calls() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.batches)
}

// Kinesis records take the batch core's rules too: under BisectBatchOnFunctionError a partial
// response retries only the rest of its batch, a function error half of it; without bisect the
// retry is a batch from the checkpoint.
func TestKinesisPoller_partial_responses_and_bisect(t *testing.T) {
	t.Parallel()
	ep := kinesisEndpoint(t)
	cases := []struct {
		name   string
		script *kinesisScript
		bisect bool
		want   []string // the second invocation's records
	}{
		{"a partial response retries from the reported record", &kinesisScript{fail: "r1"}, false, []string{"r1", "r2", "r3", "r4"}},
		{"with bisect a partial response retries the rest of its batch", &kinesisScript{fail: "r1"}, true, []string{"r1", "r2", "r3"}},
		{"with bisect a function error retries half the batch", &kinesisScript{fnErr: true}, true, []string{"r0", "r1"}},
		{"without bisect a function error retries the whole batch", &kinesisScript{fnErr: true}, false, []string{"r0", "r1", "r2", "r3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := localcloud.Endpoints{Kinesis: ep}.KinesisClient()
			name, arn := activeStream(t, client)
			var entries []kintypes.PutRecordsRequestEntry
			for i := range 6 {
				entries = append(entries, kintypes.PutRecordsRequestEntry{Data: fmt.Appendf(nil, "r%d", i), PartitionKey: aws.String("k")})
			}
			if _, err := client.PutRecords(context.Background(), &kinesis.PutRecordsInput{StreamName: aws.String(name), Records: entries}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := localcloud.RunKinesisPoller(ctx, client, name, arn, 4, localcloud.StreamOptions{Bisect: tc.bisect, MaxRecordAge: -1}, tc.script); err != nil {
				t.Fatal(err)
			}
			var calls [][]string
			testkit.Eventually(t, 30*time.Second, func() error {
				if calls = tc.script.calls(); len(calls) < 2 {
					return fmt.Errorf("%d invocations; want 2", len(calls))
				}
				return nil
			})
			if want := []string{"r0", "r1", "r2", "r3"}; !slices.Equal(calls[0], want) {
				t.Fatalf("first batch %v; want %v", calls[0], want)
			}
			if !slices.Equal(calls[1], tc.want) {
				t.Errorf("second batch %v; want %v", calls[1], tc.want)
			}
		})
	}
}
