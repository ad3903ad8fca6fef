package localcloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// poisonInvoker crashes on every batch holding the record of sequence number poison, and
// records each batch's sequence numbers.
type poisonInvoker struct {
	poison  string
	mu      sync.Mutex
	batches [][]string
	passed  []string
}

func (p *poisonInvoker) Invoke(_ context.Context, _ string, payload []byte) ([]byte, error) {
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	var seqs []string
	for _, r := range ev.Records {
		seqs = append(seqs, r.Change.SequenceNumber)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.batches = append(p.batches, seqs)
	if slices.Contains(seqs, p.poison) {
		return nil, errors.New("the function crashed")
	}
	p.passed = append(p.passed, seqs...)
	return []byte(`{"batchItemFailures":[]}`), nil
}

func streamRecord(seq string, created time.Time) types.Record {
	return types.Record{EventName: types.OperationTypeInsert, Dynamodb: &types.StreamRecord{
		SequenceNumber: aws.String(seq), ApproximateCreationDateTime: aws.Time(created),
		Keys: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k" + seq}}}}
}

// runShard runs one virtual shard of a poller over recs until every record is delivered or
// discarded, and returns the failure records sent to the on-failure destination.
func runShard(t *testing.T, ev Event, inv Invoker, recs []types.Record) []string {
	t.Helper()
	var mu sync.Mutex
	var sent []string
	p := &streamPoller{function: "fn", event: ev, invoker: inv, timeout: 5 * time.Second,
		onError: func(string, ...any) {}, count: func(func(*MappingStats)) {},
		send: func(_ context.Context, _, body string) error {
			mu.Lock()
			sent = append(sent, body)
			mu.Unlock()
			return nil
		}}
	v := newVShard("shard-1")
	for _, r := range recs {
		v.push(r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	done := make(chan struct{})
	go func() { p.work(ctx, v); close(done) }()
	for len(v.peek(1)) > 0 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if len(v.peek(1)) > 0 {
		t.Fatal("records left undelivered after 30 s")
	}
	mu.Lock()
	defer mu.Unlock()
	return sent
}

func TestStreamPoller_bisects_a_batch_whose_invocation_fails_and_discards_only_the_poison_record(t *testing.T) {
	now := time.Now()
	recs := []types.Record{streamRecord("1", now), streamRecord("2", now), streamRecord("3", now), streamRecord("4", now)}
	inv := &poisonInvoker{poison: "3"}
	sent := runShard(t, Event{BatchSize: 4, Bisect: true, MaxRetries: 2, MaxRecordAge: -1, ReportFailures: true,
		OnFailure: "arn:sqs:failures", SourceARN: "arn:stream"}, inv, recs)
	// [1 2 3 4] crashes: [1 2] alone succeeds, then [3 4] crashes, [3] crashes until its retries
	// are spent, then [4] succeeds
	if !slices.Equal(inv.passed, []string{"1", "2", "4"}) {
		t.Errorf("records applied %v (batches %v); want 1, 2 and 4: only the poison record is given up", inv.passed, inv.batches)
	}
	if len(sent) != 1 || !strings.Contains(sent[0], `"startSequenceNumber":"3"`) || !strings.Contains(sent[0], `"endSequenceNumber":"3"`) ||
		!strings.Contains(sent[0], retriesExhausted) {
		t.Errorf("failure records %v; want one for record 3, its retries exhausted", sent)
	}
}

func TestStreamPoller_discards_records_older_than_MaximumRecordAgeInSeconds(t *testing.T) {
	now := time.Now()
	recs := []types.Record{streamRecord("1", now.Add(-2*time.Minute)), streamRecord("2", now.Add(-90*time.Second)), streamRecord("3", now)}
	inv := &poisonInvoker{}
	sent := runShard(t, Event{BatchSize: 10, MaxRetries: -1, MaxRecordAge: 60, ReportFailures: true,
		OnFailure: "arn:sqs:failures", SourceARN: "arn:stream"}, inv, recs)
	if !slices.Equal(inv.passed, []string{"3"}) {
		t.Errorf("records applied %v; want only 3, the two older than a minute discarded", inv.passed)
	}
	want := fmt.Sprintf(`"condition":%q`, recordAgeExceeded)
	if len(sent) != 1 || !strings.Contains(sent[0], want) || !strings.Contains(sent[0], `"batchSize":2`) {
		t.Errorf("failure records %v; want one for records 1 and 2 saying %s", sent, want)
	}
}
