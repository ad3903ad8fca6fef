package localcloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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

// partialFunction answers each invocation with the partial batch response its script gives
// for the invocation's number (from 0) and its records; it records the sort keys of every
// batch it was given.
type partialFunction struct {
	mu      sync.Mutex
	script  func(call int, recs []events.DynamoDBEventRecord) []string // item identifiers to report
	batches [][]string
}

func (f *partialFunction) Invoke(_ context.Context, _ string, payload []byte) ([]byte, error) {
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	f.mu.Lock()
	call := len(f.batches)
	var sks []string
	for _, r := range ev.Records {
		sks = append(sks, r.Change.Keys["sk"].String())
	}
	f.batches = append(f.batches, sks)
	f.mu.Unlock()
	var resp events.DynamoDBEventResponse
	for _, id := range f.script(call, ev.Records) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: id})
	}
	return json.Marshal(resp)
}

func (f *partialFunction) calls() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.batches)
}

// putRecords writes n items of one partition key (sort keys 00, 01, ...) and returns the keys.
func putRecords(t *testing.T, n int) (arn string, sks []string) {
	t.Helper()
	db := testkit.DynamoDB(t)
	table, arn := testkit.StreamTable(t, db, "app")
	for i := range n {
		sks = append(sks, fmt.Sprintf("%02d", i))
		if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "k"}, "sk": &types.AttributeValueMemberS{Value: sks[i]}}}); err != nil {
			t.Fatal(err)
		}
	}
	return arn, sks
}

// seqOf returns the sequence number of the record of sort key sk.
func seqOf(recs []events.DynamoDBEventRecord, sk string) string {
	for _, r := range recs {
		if r.Change.Keys["sk"].String() == sk {
			return r.Change.SequenceNumber
		}
	}
	return ""
}

// waitCalls waits for at least n invocations and returns them.
func waitCalls(t *testing.T, f *partialFunction, n int) [][]string {
	t.Helper()
	var calls [][]string
	testkit.Eventually(t, 30*time.Second, func() error {
		if calls = f.calls(); len(calls) < n {
			return fmt.Errorf("%d invocations %v; want %d", len(calls), calls, n)
		}
		return nil
	})
	return calls
}

func TestStreamPoller_partial_batch_responses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		bisect bool
		report func(recs []events.DynamoDBEventRecord) []string // on the first invocation
		want   []string                                         // the second invocation's records
	}{
		// A failure in the middle: what came before is checkpointed, the reported record and
		// those after it come again (a new batch from the checkpoint).
		{"a failure in the middle retries from it", false,
			func(r []events.DynamoDBEventRecord) []string { return []string{seqOf(r, "02")} }, []string{"02", "03", "04", "05"}},
		// Several failures: the lowest sequence number is the checkpoint, whatever their order.
		{"the lowest of several reported records is the checkpoint", false,
			func(r []events.DynamoDBEventRecord) []string { return []string{seqOf(r, "03"), seqOf(r, "01")} }, []string{"01", "02", "03", "04"}},
		// An identifier that is no record of the batch, or empty, fails the whole batch.
		{"an unknown identifier beside a known one fails the whole batch", false,
			func(r []events.DynamoDBEventRecord) []string { return []string{seqOf(r, "02"), "49999999999999999999"} }, []string{"00", "01", "02", "03"}},
		{"an empty identifier beside a known one fails the whole batch", false,
			func(r []events.DynamoDBEventRecord) []string { return []string{seqOf(r, "02"), ""} }, []string{"00", "01", "02", "03"}},
		// Under BisectBatchOnFunctionError a partial response bisects the batch at the returned
		// sequence number: only the rest of that batch is retried.
		{"with bisect only the rest of the batch is retried", true,
			func(r []events.DynamoDBEventRecord) []string { return []string{seqOf(r, "01")} }, []string{"01", "02", "03"}},
		// An empty list: the whole batch succeeded.
		{"an empty list is a success", false,
			func([]events.DynamoDBEventRecord) []string { return nil }, []string{"04", "05", "06", "07"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			arn, sks := putRecords(t, 8)
			fn := &partialFunction{script: func(call int, recs []events.DynamoDBEventRecord) []string {
				if call == 0 {
					return tc.report(recs)
				}
				return nil
			}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := localcloud.RunStreamPollerWith(ctx, testkit.Streams(t), arn, 1, 4, localcloud.StreamOptions{Bisect: tc.bisect, MaxRecordAge: -1}, fn); err != nil {
				t.Fatal(err)
			}
			calls := waitCalls(t, fn, 2)
			if !slices.Equal(calls[0], sks[:4]) {
				t.Fatalf("first batch %v; want %v", calls[0], sks[:4])
			}
			// The next batch starts where the response says; like Lambda's, it holds what one
			// read of the stream returned, which on a loaded machine may be fewer records.
			if len(calls[1]) == 0 || !slices.Equal(calls[1], tc.want[:min(len(calls[1]), len(tc.want))]) || len(calls[1]) > len(tc.want) {
				t.Errorf("after the response to %v the next batch is %v; want %v, or the start of it", calls[0], calls[1], tc.want)
			}
			// Every record is delivered in the end, and none checkpointed comes again.
			testkit.Eventually(t, 30*time.Second, func() error {
				var last []string
				for _, c := range fn.calls() {
					last = append(last, c...)
				}
				if !slices.Contains(last, "07") {
					return fmt.Errorf("delivered %v; want through 07", last)
				}
				return nil
			})
			seen := map[string]int{}
			for _, c := range fn.calls() {
				for _, sk := range c {
					seen[sk]++
				}
			}
			retried := slices.Index(sks, tc.want[0])
			for i, sk := range sks {
				if i < retried && seen[sk] != 1 {
					t.Errorf("record %s delivered %d times; want once (before the checkpoint)", sk, seen[sk])
				}
			}
			if t.Failed() {
				t.Logf("batches: %s", strings.Join(func() (s []string) {
					for _, c := range fn.calls() {
						s = append(s, fmt.Sprint(c))
					}
					return
				}(), " "))
			}
		})
	}
}
