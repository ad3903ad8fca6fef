package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// key is a stream key SQS refuses as a MessageGroupId: a space and an accent.
const key = "compte é 1"

// letters is the ledger's dead-letter queue with a claim check into a bucket of fauxqs's S3,
// as template.yaml's consumers write theirs (PayloadBucket, dead-letters/<consumer>/).
func (c *cloud) letters(t *testing.T) *deadletter.Queue {
	t.Helper()
	q, _ := c.lettersAndReader(t)
	return q
}

// lettersAndReader is letters and a claim-check reader of its bucket, as a stream consumer's
// replay path reads a redriven letter past SQS's limit.
func (c *cloud) lettersAndReader(t *testing.T) (*deadletter.Queue, *claimcheck.Reader) {
	t.Helper()
	client := s3.NewFromConfig(emulatorConfig, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String(emulator(t, testkit.SQSEndpointVariable)), true
	})
	bucket := strings.ToLower(uniqueName("payloads"))
	if _, err := client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	w, err := claimcheck.NewWriter(client, claimcheck.WriterConfig{Bucket: bucket, KeyPrefix: "dead-letters/ledger/"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := claimcheck.NewReader(client, claimcheck.ReaderConfig{Buckets: []string{bucket}})
	if err != nil {
		t.Fatal(err)
	}
	return deadletter.New(c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL).WithClaimCheck(w), r
}

// applied lists the amounts the stream consumer applied to a key: its effect puts APPLIED#<key>,
// <n> in the app table.
func (c *cloud) applied(t *testing.T, k string) []string {
	t.Helper()
	out, err := c.db.Query(t.Context(), &dynamodb.QueryInput{TableName: aws.String(c.tableName("AppTable")), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "APPLIED#" + k}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range out.Items {
		got = append(got, it["sk"].(*types.AttributeValueMemberS).Value)
	}
	return got
}

// streamConsumer is the "ledger" consumer of a stream under policy: amount tells the record's
// key and amount from the event; a negative amount can never succeed.
func (c *cloud) streamConsumer(t *testing.T, policy idempotency.GroupPolicy, amount func(cloudevent.Event) (string, int, error)) port.Engine {
	t.Helper()
	h := idempotency.HandlerFunc(func(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		k, n, err := amount(ev)
		if err != nil {
			return nil, err
		}
		if n < 0 && !c.fixed.Load() {
			return nil, idempotency.Permanent(errors.New("negative amount"))
		}
		return idempotency.Effect{idempotency.Put(c.tableName("AppTable"), map[string]string{"pk": "APPLIED#" + k, "sk": fmt.Sprint(n)})}, nil
	})
	consumer, err := idempotency.New(c.db, h, idempotency.Config{Name: "ledger", Table: c.tableName("IdempotencyTable"), CacheSize: -1,
		AfterDeadLetter: policy, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return consumer.Engine()
}

// streamPort is one stream port with a batch of three records: the first a poison record past
// SQS's limit of key, the second a record of key held behind it, the third another key's.
type streamPort struct {
	name   string
	handle func(t *testing.T, c *cloud, dlq *deadletter.Queue) func(first int) int // handles the batch from record first; returns the failures
	// replayed builds the same consumer's port and returns its replay queue's handler
	// (HandleReplay, its claim checks read by payloads) and its stream's, as handle's.
	replayed func(t *testing.T, c *cloud, dlq *deadletter.Queue, payloads claimcheck.PayloadReader) (replay func(events.SQSEvent) events.SQSEventResponse, stream func(first int) int)
	ids      []string // the records' event ids
	group    string   // the hold's group of the key
	body     string   // how the first letter's body, read back, starts
}

// kinesisPort: Lambda's Kinesis event built here, as kinesalite refuses a record past 1 MiB
// (the real limit is 10 MiB): 3 MiB of data, base64 in the letter's body (4 MiB).
func kinesisPort() streamPort {
	seq := func(i int) string { return fmt.Sprintf("4960000000000000000000000000000000000000000000000%d", i) }
	data := func(k string, n int, pad int) []byte {
		b, _ := json.Marshal(map[string]any{"key": k, "n": n, "pad": strings.Repeat("k", pad)})
		return b
	}
	recs := []events.KinesisEventRecord{}
	for i, r := range []struct {
		k      string
		n, pad int
	}{{key, -1, 3 << 20}, {key, 2, 0}, {"b", 1, 0}} {
		recs = append(recs, events.KinesisEventRecord{EventID: "shardId-000000000000:" + seq(i), EventName: "aws:kinesis:record",
			EventSource: "aws:kinesis", EventSourceArn: "arn:aws:kinesis:us-east-1:000000000000:stream/ledger",
			Kinesis: events.KinesisRecord{PartitionKey: r.k, SequenceNumber: seq(i), Data: data(r.k, r.n, r.pad),
				ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: time.Now()}}})
	}
	p := streamPort{name: "kinesis", group: key, body: `{"awsRegion":"","eventID":"shardId-000000000000:`}
	for _, r := range recs {
		p.ids = append(p.ids, r.EventID)
	}
	p.replayed = func(t *testing.T, c *cloud, dlq *deadletter.Queue, payloads claimcheck.PayloadReader) (func(events.SQSEvent) events.SQSEventResponse, func(int) int) {
		proc, err := kinesisbatch.New(c.streamConsumer(t, idempotency.HoldGroup, func(ev cloudevent.Event) (string, int, error) {
			var d struct {
				Key string `json:"key"`
				N   int    `json:"n"`
			}
			return d.Key, d.N, json.Unmarshal(ev.Data, &d)
		}), kinesisbatch.Config{Options: batch.Options{DeadLetter: dlq}, Replay: batch.ReplayConfig{Payloads: payloads}})
		if err != nil {
			t.Fatal(err)
		}
		replay := func(ev events.SQSEvent) events.SQSEventResponse {
			resp, _ := proc.HandleReplay(t.Context(), ev)
			return resp
		}
		return replay, func(first int) int {
			resp, _ := proc.Handle(t.Context(), events.KinesisEvent{Records: recs[first:]})
			return len(resp.BatchItemFailures)
		}
	}
	p.handle = func(t *testing.T, c *cloud, dlq *deadletter.Queue) func(int) int {
		_, stream := p.replayed(t, c, dlq, nil)
		return stream
	}
	return p
}

// dynamoPort: a DynamoDB Streams record of NEW_AND_OLD_IMAGES of an item near DynamoDB's 400 KB
// in binary (base64 in the record's JSON: 1 MiB and more), built here as Lambda delivers it
// (DynamoDB Local's stream gives the same shape; an item this size is slow to write there).
func dynamoPort() streamPort {
	image := func(k string, n int, blob []byte) map[string]events.DynamoDBAttributeValue {
		m := map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute(k), "n": events.NewNumberAttribute(fmt.Sprint(n))}
		if blob != nil {
			m["blob"] = events.NewBinaryAttribute(blob)
		}
		return m
	}
	big := []byte(strings.Repeat("\xff", 399_000))
	recs := []events.DynamoDBEventRecord{}
	for i, r := range []struct {
		k    string
		n    int
		blob []byte
	}{{key, -1, big}, {key, 2, nil}, {"b", 1, nil}} {
		recs = append(recs, events.DynamoDBEventRecord{EventID: fmt.Sprintf("ddb-%d", i), EventName: "MODIFY", EventSource: "aws:dynamodb",
			EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/ledger/stream/2026-12-01T00:00:00.000",
			Change: events.DynamoDBStreamRecord{ApproximateCreationDateTime: events.SecondsEpochTime{Time: time.Now()}, SequenceNumber: fmt.Sprintf("%021d", i+1), StreamViewType: "NEW_AND_OLD_IMAGES",
				Keys: map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute(r.k)}, NewImage: image(r.k, r.n, r.blob),
				OldImage: image(r.k, 0, r.blob)}})
	}
	p := streamPort{name: "dynamodb", group: "pk=" + key, body: `"Keys":{"pk":{"S":"` + key + `"}},"NewImage":{"blob":{"B":"////`}
	for _, r := range recs {
		p.ids = append(p.ids, r.EventID)
	}
	p.replayed = func(t *testing.T, c *cloud, dlq *deadletter.Queue, payloads claimcheck.PayloadReader) (func(events.SQSEvent) events.SQSEventResponse, func(int) int) {
		proc, err := dynamodbbatch.New(c.streamConsumer(t, idempotency.HoldGroup, func(ev cloudevent.Event) (string, int, error) {
			var ch events.DynamoDBStreamRecord
			if err := json.Unmarshal(ev.Data, &ch); err != nil {
				return "", 0, err
			}
			var n int
			_, err := fmt.Sscan(ch.NewImage["n"].Number(), &n)
			return ch.Keys["pk"].String(), n, err
		}), dynamodbbatch.Config{Options: batch.Options{DeadLetter: dlq}, Replay: batch.ReplayConfig{Payloads: payloads}})
		if err != nil {
			t.Fatal(err)
		}
		replay := func(ev events.SQSEvent) events.SQSEventResponse {
			resp, _ := proc.HandleReplay(t.Context(), ev)
			return resp
		}
		return replay, func(first int) int {
			resp, _ := proc.Handle(t.Context(), events.DynamoDBEvent{Records: recs[first:]})
			return len(resp.BatchItemFailures)
		}
	}
	p.handle = func(t *testing.T, c *cloud, dlq *deadletter.Queue) func(int) int {
		_, stream := p.replayed(t, c, dlq, nil)
		return stream
	}
	return p
}

// A poison record past SQS's limit, of a key SQS refuses as a group (a space, an accent), on
// each stream port: dead-lettered through a claim check, its key's later record held behind
// it, the shard going on (no batch item failure, then or on a redelivery); the operator's tool
// lists and shows the letter under the key as it is, finds the key's hold by that name, and
// discarding the letters records them and releases the key (before, discard said "group
// sha256-…: not held", deleted the letter and left the key held).
func TestDLQ_a_large_stream_letter_is_dead_lettered_shown_and_discarded_under_its_key(t *testing.T) {
	t.Parallel()
	for _, port := range []streamPort{kinesisPort(), dynamoPort()} {
		t.Run(port.name, func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			handle := port.handle(t, c, c.letters(t))
			if n := handle(0); n != 0 {
				t.Fatalf("batch item failures = %d; want none: the poison record is dead-lettered and the shard goes on", n)
			}
			if n := handle(0); n != 0 { // delivered again (a lost checkpoint): still nothing reported
				t.Fatalf("redelivery: batch item failures = %d; want none", n)
			}
			if got := c.applied(t, "b"); len(got) != 1 || len(c.applied(t, key)) != 0 {
				t.Fatalf("applied b %v, %q %v; want b's record only (the key's second record held behind the poison one)", got, key, c.applied(t, key))
			}

			code, out := c.onceflow(t, "", "dlq", "list", "--queue", "LedgerDeadLetterQueue")
			if code != 0 || !strings.Contains(out, "group "+port.group) || !strings.Contains(out, "event "+port.ids[0]) || !strings.Contains(out, "bytes in S3") {
				t.Fatalf("dlq list: %d; want the letter of event %s under group %q, its body in S3", code, port.ids[0], port.group)
			}
			code, out = c.onceflow(t, "", "dlq", "show", "--queue", "LedgerDeadLetterQueue", port.ids[0])
			if code != 0 || shownBytes(out) <= 1<<20 || !strings.Contains(out, port.body) || !strings.Contains(out, "PayloadS3Pointer") || !strings.Contains(out, "negative amount") {
				t.Fatalf("dlq show: %d; want the record of over 1 MiB read back from S3 (%s…), its claim check and its reason", code, port.body)
			}
			if code, out := c.onceflow(t, "", "hold", "get", "--consumer", "ledger", port.group); code != 0 || !strings.Contains(out, "HELD") {
				t.Fatalf("hold get %q: %d; want the key held behind its letters", port.group, code)
			}
			for _, id := range port.ids[:2] {
				code, out := c.onceflow(t, "", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "poison", "--yes", id)
				if code != 0 || strings.Contains(out, "not held") && strings.Contains(out, "sha256-") || !strings.Contains(out, "recorded ledger#"+id+" as discarded") {
					t.Fatalf("dlq discard %s: %d; want it recorded and taken off the key's hold", id, code)
				}
			}
			if code, out := c.onceflow(t, "", "hold", "get", "--consumer", "ledger", port.group); code != 0 || !strings.Contains(out, "not held") {
				t.Errorf("hold get %q after both discards: %d; want the key no longer held", port.group, code)
			}
			if left := drain(t, c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL); len(left) != 0 {
				t.Errorf("%d letters left; want none", len(left))
			}
			if n := handle(0); n != 0 || len(c.applied(t, key)) != 0 {
				t.Errorf("redelivery after the discards: %d failures, applied %v; want none: the discarded records are answered", n, c.applied(t, key))
			}
		})
	}
}

// A Kinesis consumer keyed by the payload's CloudEvents id, its keys going on after a dead
// letter (GoOn: no hold names the event): the operator discards the letter of a poison event,
// and the producer puts the same event again (a new record, a new sequence number). The
// discard recorded the decoded event id the letter carries, so the re-put is answered, not
// applied (before, it recorded the record's eventID, and the re-put was applied).
func TestDLQ_discard_of_a_payload_keyed_stream_letter_answers_the_producers_put_again(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	failing := true // the first delivery fails for good; had it been applied later, it would show
	consumer := c.streamConsumer(t, idempotency.GoOn, func(ev cloudevent.Event) (string, int, error) {
		if failing {
			return "", -1, nil
		}
		return ev.Subject, 1, nil
	})
	proc, err := kinesisbatch.New(consumer, kinesisbatch.Config{Options: batch.Options{DeadLetter: c.letters(t)}, Decoder: kinesisbatch.DecoderFunc(kinesisbatch.CloudEventData)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := cloudevent.Encode(cloudevent.Event{ID: "order-9", Source: "shop", Type: "order.placed", Subject: "c-9", Time: time.Now().UTC(),
		Data: json.RawMessage(`{"total":30}`)})
	put := func(seq string) events.KinesisEvent {
		return events.KinesisEvent{Records: []events.KinesisEventRecord{{EventID: "shardId-000000000000:" + seq, EventSourceArn: "arn:aws:kinesis:us-east-1:000000000000:stream/orders",
			Kinesis: events.KinesisRecord{PartitionKey: "c-9", SequenceNumber: seq, Data: body}}}}
	}
	if resp, _ := proc.Handle(t.Context(), put("101")); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v; want the poison record dead-lettered", resp.BatchItemFailures)
	}
	code, out := c.onceflow(t, "", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "bad order", "--yes", "shardId-000000000000:101")
	if code != 0 || !strings.Contains(out, "recorded ledger#order-9 as discarded") {
		t.Fatalf("dlq discard: %d; want event order-9 recorded as discarded", code)
	}
	failing = false
	if resp, _ := proc.Handle(t.Context(), put("102")); len(resp.BatchItemFailures) != 0 || len(c.applied(t, "c-9")) != 0 {
		t.Errorf("the producer's put again: failures %v, applied %v; want it answered as discarded, never applied", resp.BatchItemFailures, c.applied(t, "c-9"))
	}
}

// shownBytes is the body size dlq show printed ("body (N bytes):"), 0 when it printed none.
func shownBytes(out string) int {
	var n int
	if _, rest, ok := strings.Cut(out, "body ("); ok {
		_, _ = fmt.Sscanf(rest, "%d bytes", &n)
	}
	return n
}

// The runbook's path for a held stream key whose cause is fixed, on each stream port: the
// poison record past SQS's limit and its key's record held behind it are redriven with the
// tool to the consumer's replay queue (dlq redrive --to), the large one as a claim check; the
// consumer's replay handler applies them in the key's order, as the stream would have, and
// the key is free: nothing held, nothing left in either queue, and the stream's batch
// delivered again applies nothing twice (before, dlq redrive refused a stream letter).
func TestDLQ_a_held_stream_key_is_redriven_to_its_replay_queue_and_applied(t *testing.T) {
	t.Parallel()
	for _, port := range []streamPort{kinesisPort(), dynamoPort()} {
		t.Run(port.name, func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			dlq, payloads := c.lettersAndReader(t)
			replay, stream := port.replayed(t, c, dlq, payloads)
			if n := stream(0); n != 0 {
				t.Fatalf("batch item failures = %d; want none", n)
			}
			out, err := c.sqs.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(uniqueName("ledger-replay") + ".fifo"),
				Attributes: map[string]string{"FifoQueue": "true"}})
			if err != nil {
				t.Fatal(err)
			}
			rq := aws.ToString(out.QueueUrl)
			code, text := c.onceflow(t, "", "dlq", "redrive", "--queue", "LedgerDeadLetterQueue")
			if code == 0 || !strings.Contains(text, "replay queue, which is not known") {
				t.Fatalf("dlq redrive without --to: %d; want the stream letters left, saying they go to the replay queue", code)
			}
			c.fixed.Store(true)
			// The Kinesis consumer's replay queue given with --to; the DynamoDB one known from
			// the stack's ReplayQueues output, as template.yaml states the statement consumer's.
			args := []string{"dlq", "redrive", "--queue", "LedgerDeadLetterQueue", "--to", rq}
			if port.name == "dynamodb" {
				c.output(t, "ReplayQueues", c.e.Queues["LedgerDeadLetterQueue"].URL+"="+rq)
				args = args[:4]
			}
			applied := 0
			for try := 0; try < 10 && (len(c.applied(t, key)) < 2 || applied == 0); try++ {
				code, text = c.onceflow(t, "", args...)
				if code != 0 {
					t.Fatalf("%v: %d\n%s", args, code, text)
				}
				if len(args) == 4 && !strings.Contains(text, "to its replay queue "+rq) {
					t.Fatalf("%v without --to: want the letters sent to the ReplayQueues output's queue\n%s", args, text)
				}
				applied += replayQueue(t, c, rq, replay)
			}
			if got := c.applied(t, key); len(got) != 2 {
				t.Fatalf("%q applied %v; want its two records, redriven and replayed", key, got)
			}
			if code, text := c.onceflow(t, "", "hold", "get", "--consumer", "ledger", port.group); code != 0 || !strings.Contains(text, "not held") {
				t.Errorf("hold get %q after the replay: %d\n%s\nwant the key no longer held", port.group, code, text)
			}
			if left := len(drain(t, c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL)) + len(drain(t, c.sqs, rq)); left != 0 {
				t.Errorf("%d messages left in the dead-letter and replay queues; want none", left)
			}
			if n := stream(0); n != 0 || len(c.applied(t, key)) != 2 || len(c.applied(t, "b")) != 1 {
				t.Errorf("the stream's batch again: %d failures, applied %v and %v; want each record once", n, c.applied(t, key), c.applied(t, "b"))
			}
		})
	}
}

// replayQueue delivers the replay queue's messages to replay as Lambda's SQS event source
// does, deleting those it did not report failed, until the queue hands out none; it returns
// how many it applied.
func replayQueue(t *testing.T, c *cloud, url string, replay func(events.SQSEvent) events.SQSEventResponse) int {
	t.Helper()
	done := 0
	for {
		out, err := c.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return done
		}
		ev := events.SQSEvent{}
		for _, m := range out.Messages {
			rec := events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
				Attributes: m.Attributes, MessageAttributes: map[string]events.SQSMessageAttribute{}, EventSource: "aws:sqs"}
			for name, a := range m.MessageAttributes {
				rec.MessageAttributes[name] = events.SQSMessageAttribute{DataType: aws.ToString(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
			}
			ev.Records = append(ev.Records, rec)
		}
		failed := map[string]bool{}
		for _, f := range replay(ev).BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		for _, m := range out.Messages {
			if failed[aws.ToString(m.MessageId)] {
				if _, err := c.sqs.ChangeMessageVisibility(t.Context(), &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := c.sqs.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
			done++
		}
	}
}

// The runbook's skip path for a held stream key whose blocker cannot be fixed, on each stream
// port: hold skip --queue lets the key go on past the poison record (its letter moved behind
// the key's other letters), the redrive to the replay queue applies the held record, the
// poison one comes back dead-lettered again without holding its key, and its discard ends
// with nothing held and nothing left.
func TestDLQ_a_skipped_stream_blocker_lets_its_key_go_on_and_is_discarded(t *testing.T) {
	t.Parallel()
	for _, port := range []streamPort{kinesisPort(), dynamoPort()} {
		t.Run(port.name, func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			dlq, payloads := c.lettersAndReader(t)
			replay, stream := port.replayed(t, c, dlq, payloads)
			if n := stream(0); n != 0 {
				t.Fatalf("batch item failures = %d; want none", n)
			}
			out, err := c.sqs.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String(uniqueName("ledger-replay") + ".fifo"),
				Attributes: map[string]string{"FifoQueue": "true"}})
			if err != nil {
				t.Fatal(err)
			}
			rq := aws.ToString(out.QueueUrl)
			code, text := c.onceflow(t, "", "hold", "skip", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "poison", "--yes", port.group)
			if code != 0 || !strings.Contains(text, "moved its letter behind") {
				t.Fatalf("hold skip %q: %d\n%s\nwant the blocker skipped, its letter moved behind", port.group, code, text)
			}
			for try := 0; try < 10 && len(c.applied(t, key)) == 0; try++ {
				if code, text := c.onceflow(t, "", "dlq", "redrive", "--queue", "LedgerDeadLetterQueue", "--to", rq); code != 0 {
					t.Fatalf("dlq redrive --to the replay queue: %d\n%s", code, text)
				}
				replayQueue(t, c, rq, replay)
			}
			if got := c.applied(t, key); len(got) != 1 || got[0] != "2" {
				t.Fatalf("%q applied %v; want its held record only", key, got)
			}
			if code, text := c.onceflow(t, "", "hold", "get", "--consumer", "ledger", port.group); code != 0 || !strings.Contains(text, "not held") {
				t.Fatalf("hold get %q: %d\n%s\nwant the key no longer held", port.group, code, text)
			}
			discarded := false
			for try := 0; try < 10 && !discarded; try++ { // the skipped poison comes back dead-lettered, unheld
				replayQueue(t, c, rq, replay)
				code, text = c.onceflow(t, "", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "poison", "--yes", port.ids[0])
				discarded = code == 0 && strings.Contains(text, "recorded ledger#"+port.ids[0]+" as discarded")
				if !discarded {
					_, _ = c.onceflow(t, "", "dlq", "redrive", "--queue", "LedgerDeadLetterQueue", "--to", rq)
				}
			}
			if !discarded {
				t.Fatalf("dlq discard %s: %d\n%s\nwant the skipped poison's letter discarded", port.ids[0], code, text)
			}
			if left := len(drain(t, c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL)) + len(drain(t, c.sqs, rq)); left != 0 {
				t.Errorf("%d messages left in the dead-letter and replay queues; want none", left)
			}
			if n := stream(0); n != 0 || len(c.applied(t, key)) != 1 {
				t.Errorf("the stream's batch again: %d failures, applied %v; want the poison answered as discarded", n, c.applied(t, key))
			}
		})
	}
}
