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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// poisonFunction fails a whole invocation (a function error, not a partial batch response)
// when its batch holds the record of sort key poison, while poisoned is set; it records the
// sort keys of the batches it passed, in order, and every batch size it was given.
type poisonFunction struct {
	mu       sync.Mutex
	poison   string
	poisoned bool
	passed   []string
	sizes    []int
}

func (f *poisonFunction) Invoke(_ context.Context, _ string, payload []byte) ([]byte, error) {
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sizes = append(f.sizes, len(ev.Records))
	var sks []string
	for _, r := range ev.Records {
		sk := r.Change.Keys["sk"].String()
		if f.poisoned && sk == f.poison {
			return nil, errors.New("poisoned batch")
		}
		sks = append(sks, sk)
	}
	f.passed = append(f.passed, sks...)
	return []byte(`{"batchItemFailures":[]}`), nil
}

func (f *poisonFunction) snapshot() ([]string, []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.passed), slices.Clone(f.sizes)
}

// With BisectBatchOnFunctionError a batch whose invocation fails is split until the failing
// record is alone: every record before it is delivered, in order, and none after it; with
// MaximumRetryAttempts -1 the record is retried until it succeeds, then the rest follows.
func TestStreamPoller_bisect_isolates_a_failing_record_and_retries_it_until_it_succeeds(t *testing.T) {
	t.Parallel()
	for _, bisect := range []bool{true, false} {
		t.Run(fmt.Sprintf("bisect=%t", bisect), func(t *testing.T) {
			t.Parallel()
			db := testkit.DynamoDB(t)
			table, arn := testkit.StreamTable(t, db, "app")
			var want []string
			for i := range 8 {
				want = append(want, fmt.Sprintf("%02d", i))
				if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: "k"}, "sk": &types.AttributeValueMemberS{Value: want[i]}}}); err != nil {
					t.Fatal(err)
				}
			}
			fn := &poisonFunction{poison: want[5], poisoned: true}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := localcloud.RunStreamPollerWith(ctx, testkit.Streams(t), arn, 1, 8, localcloud.StreamOptions{Bisect: bisect, MaxRecordAge: -1}, fn); err != nil {
				t.Fatal(err)
			}
			if bisect {
				testkit.Eventually(t, 30*time.Second, func() error {
					if passed, sizes := fn.snapshot(); !slices.Equal(passed, want[:5]) || !slices.Contains(sizes, 1) {
						return fmt.Errorf("passed %v in batches of %v; want %v, and the failing record alone in a batch", passed, sizes, want[:5])
					}
					return nil
				})
			} else {
				time.Sleep(4 * time.Second) // a few retries of the whole batch
				if passed, sizes := fn.snapshot(); len(passed) != 0 || slices.ContainsFunc(sizes, func(n int) bool { return n != 8 }) {
					t.Fatalf("without bisect: passed %v in batches of %v; want nothing passed, every batch whole", passed, sizes)
				}
			}
			time.Sleep(2 * time.Second) // more retries: still nothing after the failing record
			if passed, _ := fn.snapshot(); len(passed) > 5 {
				t.Fatalf("passed %v while %s failed; want nothing from it on", passed, want[5])
			}
			fn.mu.Lock()
			fn.poisoned = false
			fn.mu.Unlock()
			testkit.Eventually(t, 30*time.Second, func() error {
				if passed, _ := fn.snapshot(); !slices.Equal(passed, want) {
					return fmt.Errorf("passed %v; want every record once, in order: %v", passed, want)
				}
				return nil
			})
		})
	}
}

// MaximumRecordAgeInSeconds gives up a record that keeps failing once it is older than that
// (AWS allows 60 s and more; 1 s here), and the records after it go on; with -1 (the
// bisect test above) it is retried for good.
func TestStreamPoller_gives_up_a_failing_record_older_than_MaximumRecordAgeInSeconds(t *testing.T) {
	t.Parallel()
	db := testkit.DynamoDB(t)
	table, arn := testkit.StreamTable(t, db, "app")
	for _, sk := range []string{"00", "01"} {
		if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "k"}, "sk": &types.AttributeValueMemberS{Value: sk}}}); err != nil {
			t.Fatal(err)
		}
	}
	fn := &poisonFunction{poison: "00", poisoned: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := localcloud.RunStreamPollerWith(ctx, testkit.Streams(t), arn, 1, 1, localcloud.StreamOptions{MaxRecordAge: 1}, fn); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, func() error {
		if passed, sizes := fn.snapshot(); !slices.Equal(passed, []string{"01"}) {
			return fmt.Errorf("passed %v after %d invocations; want the record after the expired one", passed, len(sizes))
		}
		return nil
	})
}
