package localcloud_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

func getItem(ep localcloud.Endpoints, pk string) (map[string]types.AttributeValue, error) {
	out, err := ep.DynamoDBClient().GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(ep.Tables["NotesTable"].Name), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}})
	if err != nil {
		return nil, err
	}
	if out.Item == nil {
		return nil, fmt.Errorf("no item %s", pk)
	}
	return out.Item, nil
}

func str(item map[string]types.AttributeValue, k string) string {
	if s, ok := item[k].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func TestSQSPoller_deletes_successes_and_dead_letters_failures(t *testing.T) {
	ep := cloud(t).Endpoints()
	ctx, q := context.Background(), ep.SQSClient()
	queue, dlq := ep.Queues["NotesQueue"], ep.Queues["NotesDLQ"]
	id := fmt.Sprint(time.Now().UnixNano())
	bodies := map[string]string{"ok-" + id + "-a": "g1", "ok-" + id + "-b": "g2", "fail-" + id: "g3"}
	for body, group := range bodies {
		if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queue.URL),
			MessageBody: aws.String(body), MessageGroupId: aws.String(group + id)}); err != nil {
			t.Fatal(err)
		}
	}
	for body, group := range bodies {
		if strings.HasPrefix(body, "fail") {
			continue
		}
		testkit.Eventually(t, 20*time.Second, func() error {
			item, err := getItem(ep, "sqs#"+body)
			if err != nil {
				return err
			}
			if g, src := str(item, "group"), str(item, "source"); g != group+id || src != "aws:sqs "+queue.ARN {
				return fmt.Errorf("event attributes: group %q source %q", g, src)
			}
			if n := str(item, "receives"); n != "1" {
				return fmt.Errorf("ApproximateReceiveCount %s, want 1", n)
			}
			return nil
		})
	}
	// The failed message comes back after each visibility timeout (2 s) and, past
	// maxReceiveCount (2), moves to the dead-letter queue.
	var dead []sqstypes.Message
	testkit.Eventually(t, 30*time.Second, func() error {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq.URL),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			return err
		}
		dead = append(dead, out.Messages...)
		if len(dead) == 0 {
			return fmt.Errorf("nothing in the dead-letter queue yet")
		}
		return nil
	})
	if len(dead) != 1 || aws.ToString(dead[0].Body) != "fail-"+id {
		t.Fatalf("dead letters = %v, want only fail-%s", dead, id)
	}
	testkit.Eventually(t, 10*time.Second, func() error {
		out, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queue.URL),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
				sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
		if err != nil {
			return err
		}
		if a := out.Attributes; a["ApproximateNumberOfMessages"] != "0" || a["ApproximateNumberOfMessagesNotVisible"] != "0" {
			return fmt.Errorf("queue still holds messages: %v", a)
		}
		return nil
	})
}

func TestStreamPoller_delivers_inserts(t *testing.T) {
	ep := cloud(t).Endpoints()
	pk := fmt.Sprintf("note#%d", time.Now().UnixNano())
	_, err := ep.DynamoDBClient().PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String(ep.Tables["NotesTable"].Name),
		Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk},
			"text": &types.AttributeValueMemberS{Value: "hello stream"}}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, func() error {
		item, err := getItem(ep, "seen#"+pk)
		if err != nil {
			return err
		}
		want := "aws:dynamodb " + ep.Tables["NotesTable"].StreamARN
		if str(item, "text") != "hello stream" || str(item, "source") != want || str(item, "seq") == "" {
			return fmt.Errorf("stream consumer saw %v, want text, source %q and a sequence number", item, want)
		}
		return nil
	})
}

func TestStats_count_deliveries_and_item_failures(t *testing.T) {
	c := cloud(t)
	TestSQSPoller_deletes_successes_and_dead_letters_failures(t)
	s := c.Stats()
	m := s.Mappings["SQSConsumer/Notes"]
	if m.Succeeded < 2 || m.ItemFailures < 2 || m.Records < m.Succeeded+m.ItemFailures || m.Batches < 2 {
		t.Errorf("SQS mapping stats = %+v, want at least 2 deleted and 2 item failures (one message, received twice)", m)
	}
	if f := s.Functions["SQSConsumer"]; f.Invocations < m.Batches {
		t.Errorf("function stats = %+v, want at least %d invocations", f, m.Batches)
	}
	if m.LargestBatch < 1 || m.LargestBatch > 5 {
		t.Errorf("largest batch = %d, want 1 to the mapping's BatchSize 5", m.LargestBatch)
	}
	// A Go bootstrap's peak RSS is a few MiB at least, and far below a gigabyte.
	if kib := s.Functions["SQSConsumer"].PeakRSSKiB; kib < 1024 || kib > 1<<20 {
		t.Errorf("peak RSS = %d KiB, want the bootstrap's VmHWM", kib)
	}
}

func TestSQSPoller_redelivers_a_batch_whose_environment_crashed_after_commit(t *testing.T) {
	c := cloud(t)
	ep := c.Endpoints()
	restarts := c.Stats().Functions["SQSConsumer"].Restarts
	body := fmt.Sprintf("crash-%d", time.Now().UnixNano())
	crashSQSConsumer.Store(true)
	if _, err := ep.SQSClient().SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(ep.Queues["NotesQueue"].URL),
		MessageBody: aws.String(body), MessageGroupId: aws.String(body)}); err != nil {
		t.Fatal(err)
	}
	// The first delivery commits its item and loses its answer; the message comes back after
	// the visibility timeout and the second delivery overwrites the item and is deleted.
	testkit.Eventually(t, 20*time.Second, func() error {
		item, err := getItem(ep, "sqs#"+body)
		if err != nil {
			return err
		}
		if n := str(item, "receives"); n != "2" {
			return fmt.Errorf("ApproximateReceiveCount %s, want 2", n)
		}
		return nil
	})
	if got := c.Stats().Functions["SQSConsumer"].Restarts; got <= restarts {
		t.Errorf("restarts = %d, want more than %d", got, restarts)
	}
}

func TestStreamPoller_retries_from_the_first_failed_record_in_order(t *testing.T) {
	c := cloud(t)
	ep := c.Endpoints()
	ctx, db, table := context.Background(), ep.DynamoDBClient(), aws.String(ep.Tables["NotesTable"].Name)
	put := func(pk, text string) {
		t.Helper()
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pk}, "text": &types.AttributeValueMemberS{Value: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	id := time.Now().UnixNano()
	gated, after := fmt.Sprintf("note#%d-gated", id), fmt.Sprintf("note#%d-after", id)
	failures := func() int { return c.Stats().Mappings["StreamConsumer/Changes"].ItemFailures }
	before := failures()
	put(gated, "gate")
	put(after, "after")
	// Several failed deliveries (fewer than MaximumRetryAttempts), however slow the machine.
	testkit.Eventually(t, 60*time.Second, func() error {
		if n := failures() - before; n < 2 {
			return fmt.Errorf("%d failed deliveries of the gated record, want 2", n)
		}
		return nil
	})
	for _, pk := range []string{gated, after} {
		if _, err := getItem(ep, "seen#"+pk); err == nil {
			t.Fatalf("%s was handled while the record before it kept failing", pk)
		}
	}
	put("gate#"+gated, "open")
	for _, pk := range []string{gated, after} {
		testkit.Eventually(t, 60*time.Second, func() error { _, err := getItem(ep, "seen#"+pk); return err })
	}
}

func TestStreamPoller_discards_after_maximum_retries_to_the_on_failure_destination(t *testing.T) {
	// The one parallel test on the Notes table's stream (see cloud): its poison holds the stream's
	// one shard for nine invocations, which the other stream tests, serial, have ended before.
	t.Parallel()
	c := cloud(t)
	ep := c.Endpoints()
	pk := fmt.Sprintf("note#%d-poison", time.Now().UnixNano())
	if _, err := ep.DynamoDBClient().PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(ep.Tables["NotesTable"].Name),
		Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "text": &types.AttributeValueMemberS{Value: "poison"}}}); err != nil {
		t.Fatal(err)
	}
	// MaximumRetryAttempts 8: nine invocations a second apart, then the failure record.
	var body string
	testkit.Eventually(t, 90*time.Second, func() error {
		out, err := ep.SQSClient().ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(ep.Queues["StreamFailures"].URL), WaitTimeSeconds: 1})
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
		DDBStreamBatchInfo struct {
			StreamArn string
			BatchSize int
		}
	}
	if err := json.Unmarshal([]byte(body), &rec); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if rec.RequestContext.Condition != "RetryAttemptsExhausted" || rec.RequestContext.ApproximateInvokeCount != 9 ||
		rec.DDBStreamBatchInfo.StreamArn != ep.Tables["NotesTable"].StreamARN || rec.DDBStreamBatchInfo.BatchSize < 1 {
		t.Errorf("failure record = %s", body)
	}
	if m := c.Stats().Mappings["StreamConsumer/Changes"]; m.Discarded < 1 || m.Filtered < 1 {
		t.Errorf("stream mapping stats = %+v, want discarded and filtered records", m)
	}
}
