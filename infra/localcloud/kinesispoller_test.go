package localcloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kintypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The hash keys of the two shards of the test template's Clicks stream (kinesalite splits the
// 128-bit hash key space evenly): a record sent with one of them lands on that shard.
const (
	firstShard  = "0"
	secondShard = "170141183460469231731687303715884105728"
)

type click struct{ id, text, hashKey string }

// putClicks writes records to the Clicks stream in one PutRecords call, in order.
func putClicks(t *testing.T, ep localcloud.Endpoints, clicks ...click) {
	t.Helper()
	var entries []kintypes.PutRecordsRequestEntry
	for _, c := range clicks {
		data, _ := json.Marshal(map[string]string{"id": c.id, "text": c.text})
		entries = append(entries, kintypes.PutRecordsRequestEntry{Data: data, PartitionKey: aws.String(c.id),
			ExplicitHashKey: aws.String(c.hashKey)})
	}
	out, err := ep.KinesisClient().PutRecords(context.Background(), &kinesis.PutRecordsInput{
		StreamName: aws.String(ep.KinesisStreams["Clicks"].Name), Records: entries})
	if err != nil {
		t.Fatal(err)
	}
	if n := aws.ToInt32(out.FailedRecordCount); n != 0 {
		t.Fatalf("PutRecords: %d records failed", n)
	}
}

// deliveries returns how many times the Kinesis consumer handled the record of id (0: never).
func deliveries(t *testing.T, ep localcloud.Endpoints, id string) int {
	t.Helper()
	item, err := getItem(ep, "kseen#"+id)
	if err != nil {
		return 0
	}
	v, ok := item["deliveries"].(*ddbtypes.AttributeValueMemberN)
	if !ok {
		t.Fatalf("kseen#%s has no numeric deliveries: %v", id, item)
	}
	n, err := strconv.Atoi(v.Value)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestKinesisPoller_delivers_records_of_the_template_stream_as_Lambda_does(t *testing.T) {
	c := cloud(t)
	ep := c.Endpoints()
	id := fmt.Sprintf("k%d-plain", time.Now().UnixNano())
	filtered := c.Stats().Mappings["KinesisConsumer/Clicks"].Filtered
	putClicks(t, ep, click{"x" + id, "dropped by the filter", firstShard}, click{id, "hello", secondShard})
	testkit.Eventually(t, 30*time.Second, func() error { _, err := getItem(ep, "kseen#"+id); return err })
	item, _ := getItem(ep, "kseen#"+id)
	stream := ep.KinesisStreams["Clicks"]
	if got, want := str(item, "source"), "aws:kinesis "+stream.ARN; got != want {
		t.Errorf("source = %q; want %q", got, want)
	}
	if got := str(item, "eventId"); !strings.HasPrefix(got, "shardId-000000000001:") || !strings.HasSuffix(got, str(item, "seq")) {
		t.Errorf("eventID = %q; want shardId-000000000001:<sequence number %s>", got, str(item, "seq"))
	}
	if str(item, "key") != id {
		t.Errorf("partition key = %q; want %q", str(item, "key"), id)
	}
	testkit.Eventually(t, 10*time.Second, func() error {
		if n := c.Stats().Mappings["KinesisConsumer/Clicks"].Filtered - filtered; n < 1 {
			return fmt.Errorf("%d records filtered; want the one whose id does not start with k", n)
		}
		return nil
	})
}

// A failure in the middle of a batch: the record before it is handled once, the failed record
// and the one after it on its shard wait, redelivered from the reported record; the other
// shard goes on meanwhile; once the failure clears, everything is handled exactly once.
func TestKinesisPoller_a_failure_in_the_middle_of_a_batch_retries_from_the_reported_record(t *testing.T) {
	c := cloud(t)
	ep := c.Endpoints()
	base := fmt.Sprintf("k%d", time.Now().UnixNano())
	before, gated, after, other := base+"-before", base+"-gated", base+"-after", base+"-other"
	failures := func() int { return c.Stats().Mappings["KinesisConsumer/Clicks"].ItemFailures }
	start := failures()
	putClicks(t, ep, click{before, "one", firstShard}, click{gated, "gate", firstShard}, click{after, "three", firstShard})
	putClicks(t, ep, click{other, "elsewhere", secondShard})
	testkit.Eventually(t, 60*time.Second, func() error {
		if n := failures() - start; n < 2 {
			return fmt.Errorf("%d failed deliveries of the gated record; want 2", n)
		}
		return nil
	})
	testkit.Eventually(t, 30*time.Second, func() error {
		if n := deliveries(t, ep, other); n != 1 {
			return fmt.Errorf("the other shard's record handled %d times; want once while the first shard waits", n)
		}
		return nil
	})
	if n := deliveries(t, ep, before); n != 1 {
		t.Errorf("the record before the failure was handled %d times; want once", n)
	}
	for _, id := range []string{gated, after} {
		if n := deliveries(t, ep, id); n != 0 {
			t.Fatalf("%s handled %d times while the record before it kept failing; want none", id, n)
		}
	}
	if _, err := ep.DynamoDBClient().PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(ep.Tables["NotesTable"].Name),
		Item: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "gate#" + gated}}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{gated, after} {
		testkit.Eventually(t, 60*time.Second, func() error {
			if n := deliveries(t, ep, id); n != 1 {
				return fmt.Errorf("%s handled %d times; want once", id, n)
			}
			return nil
		})
	}
	if n := deliveries(t, ep, before); n != 1 {
		t.Errorf("after the retries the record before the failure was handled %d times; want once", n)
	}
}

func TestKinesisPoller_discards_after_maximum_retries_to_the_on_failure_destination(t *testing.T) {
	// The one parallel test on the shared cloud's Clicks stream (see cloud): its poison, alone in
	// its batch, holds the first shard for four invocations; the serial tests on that stream have
	// ended before (the parallel Kinesis tests run on streams of their own).
	t.Parallel()
	c := cloud(t)
	ep := c.Endpoints()
	id := fmt.Sprintf("k%d-poison", time.Now().UnixNano())
	putClicks(t, ep, click{id, "poison", firstShard})
	// MaximumRetryAttempts 3: four invocations a second apart, then the failure record.
	var body string
	testkit.Eventually(t, 60*time.Second, func() error {
		out, err := ep.SQSClient().ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(ep.Queues["KinesisFailures"].URL), WaitTimeSeconds: 1})
		if err != nil {
			return err
		}
		if len(out.Messages) == 0 {
			return fmt.Errorf("no failure record yet")
		}
		body = aws.ToString(out.Messages[0].Body)
		return nil
	})
	var rec struct {
		RequestContext struct {
			Condition              string
			ApproximateInvokeCount int
		}
		KinesisBatchInfo struct {
			ShardID             string
			StartSequenceNumber string
			StreamArn           string
			BatchSize           int
		}
	}
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	b := rec.KinesisBatchInfo
	if rec.RequestContext.Condition != "RetryAttemptsExhausted" || rec.RequestContext.ApproximateInvokeCount != 4 ||
		b.StreamArn != ep.KinesisStreams["Clicks"].ARN || b.ShardID != "shardId-000000000000" || b.BatchSize != 1 || b.StartSequenceNumber == "" {
		t.Errorf("failure record = %s", body)
	}
	if m := c.Stats().Mappings["KinesisConsumer/Clicks"]; m.Discarded < 1 {
		t.Errorf("kinesis mapping stats = %+v; want a discarded record", m)
	}
}
