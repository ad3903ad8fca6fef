package dynamodbbatch_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/testkit"
)

func handle(t *testing.T, p *dynamodbbatch.Processor, recs []events.DynamoDBEventRecord) []string {
	t.Helper()
	resp, err := p.Handle(context.Background(), events.DynamoDBEvent{Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []string
	for _, f := range resp.BatchItemFailures {
		seqs = append(seqs, f.ItemIdentifier)
	}
	return seqs
}

// A record failing on every delivery is counted by its eventID across Lambda's retries and
// dead-lettered at MaxAttempts, so the shard moves on instead of retrying it until it expires.
func TestProcessor_record_failing_every_time_is_dead_lettered_at_MaxAttempts(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	sq := testkit.SQS(t)
	dlq := testkit.CreateFIFOQueue(t, sq, "stream-dlq")
	e.write(t, "a", 1)
	e.write(t, "a", 2)
	recs := e.records(t)
	p, err := dynamodbbatch.New(e.consumer(t, idempotency.GoOn).Engine(), dynamodbbatch.Config{Options: batch.Options{DeadLetter: deadletter.New(sq, dlq), MaxAttempts: 2}})
	if err != nil {
		t.Fatal(err)
	}
	e.failOnce("a", 1, errors.New("downstream timed out"))
	if failed := handle(t, p, recs); !slices.Equal(failed, []string{recs[0].Change.SequenceNumber}) {
		t.Fatalf("first delivery BatchItemFailures = %v; want a1's sequence number", failed)
	}
	e.failOnce("a", 1, errors.New("downstream timed out"))
	if failed := handle(t, p, recs); len(failed) > 0 {
		t.Fatalf("second delivery BatchItemFailures = %v; want none: a1 dead-lettered after 2 failures", failed)
	}
	if got := e.applied(t, "a"); !slices.Equal(got, []int{2}) {
		t.Errorf("item a applied %v; want [2] (GoOn: a1 dead-lettered, a2 applied)", got)
	}
	letters := testkit.Drain(t, sq, dlq)
	if len(letters) != 1 || !strings.Contains(aws.ToString(letters[0].MessageAttributes[deadletter.AttrReason].StringValue), "failed 2 times") {
		t.Fatalf("dead letters %d; want a1's, its reason \"failed 2 times: ...\"", len(letters))
	}
}

// Packing across items, as on SQS: the next records of several items commit in one
// TransactWriteItems; unpacked, each in its own.
func TestProcessor_packs_the_records_of_several_items_into_one_transaction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  dynamodbbatch.Config
		want int64
	}{{"packed", dynamodbbatch.Config{}, 1}, {"unpacked", dynamodbbatch.Config{Options: batch.Options{NoPacking: true}}, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newStreamEnv(t)
			for _, item := range []string{"a", "b", "c", "d"} {
				e.write(t, item, 1)
			}
			p, err := dynamodbbatch.New(e.consumer(t, idempotency.GoOn).Engine(), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if failed := handle(t, p, e.records(t)); len(failed) > 0 {
				t.Fatalf("BatchItemFailures = %v; want none", failed)
			}
			if got := e.requests.Of("TransactWriteItems"); got != tc.want {
				t.Errorf("TransactWriteItems calls = %d; want %d (%s)", got, tc.want, e.requests)
			}
			for _, item := range []string{"a", "b", "c", "d"} {
				if got := e.applied(t, item); !slices.Equal(got, []int{1}) {
					t.Errorf("item %s applied %v; want [1]", item, got)
				}
			}
		})
	}
}

// The deadline guard: with less time left than DeadlineMargin no record starts, and the
// response reports the batch's first record, so Lambda delivers the whole batch again.
func TestProcessor_deadline_guard_reports_the_first_record(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t)
	e.write(t, "a", 1)
	e.write(t, "b", 1)
	recs := e.records(t)
	p, err := dynamodbbatch.New(e.consumer(t, idempotency.GoOn).Engine(), dynamodbbatch.Config{Options: batch.Options{DeadlineMargin: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := p.Handle(ctx, events.DynamoDBEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != recs[0].Change.SequenceNumber {
		t.Fatalf("Handle = %+v, %v; want the first record's sequence number %s", resp, err, recs[0].Change.SequenceNumber)
	}
	if got := e.requests.Total(); got != 0 {
		t.Errorf("%d DynamoDB calls; want none: no record started", got)
	}
}
