package sqsbatch_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// outcomes keeps the outcome of every event the consumer applies, from its log line
// ("message <outcome>", with eventId and outcome).
type outcomes struct {
	mu  sync.Mutex
	got []string // "<event id>:<outcome>"
}

func (o *outcomes) Enabled(context.Context, slog.Level) bool { return true }
func (o *outcomes) WithAttrs([]slog.Attr) slog.Handler       { return o }
func (o *outcomes) WithGroup(string) slog.Handler            { return o }

func (o *outcomes) Handle(_ context.Context, r slog.Record) error {
	var id, outcome string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "eventId":
			id = a.Value.String()
		case "outcome":
			outcome = a.Value.String()
		}
		return true
	})
	if outcome != "" && r.Message == "message "+outcome {
		o.mu.Lock()
		o.got = append(o.got, id+":"+outcome)
		o.mu.Unlock()
	}
	return nil
}

func (o *outcomes) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	got := o.got
	o.got = nil
	return got
}

// largeStack is a consumer of a FIFO queue whose large payloads go through a bucket of the
// emulator's S3: each blob.stored event adds len(data.blob) to the item BLOBS/total.
type largeStack struct {
	s3       *s3.Client
	sqs      *sqs.Client
	db       *dynamodb.Client
	bucket   string
	queue    string
	dlq      string
	app      string
	applier  *outcomes
	consumer *sqsbatch.Processor
}

func newLargeStack(t *testing.T) *largeStack {
	t.Helper()
	s := &largeStack{s3: testkit.S3Client(t), sqs: testkit.SQS(t), db: testkit.DynamoDB(t)}
	s.bucket = testkit.Bucket(t, s.s3, "payloads")
	s.queue, s.dlq = testkit.CreateFIFOQueue(t, s.sqs, "large"), testkit.CreateFIFOQueue(t, s.sqs, "large-dlq")
	s.app = testkit.Table(t, s.db, "app", "pk", "sk")
	router := idempotency.NewRouter()
	idempotency.Route(router, "blob.stored", func(ev cloudevent.Event, d struct{ Blob string }) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Update(s.app, map[string]string{"pk": "BLOBS", "sk": "total"},
			expression.Add(expression.Name("bytes"), expression.Value(len(d.Blob))))}, nil
	})
	s.applier = &outcomes{}
	c, err := idempotency.New(s.db, router, idempotency.Config{Name: "blobs", Table: testkit.IdempotencyTable(t, s.db),
		CacheSize: -1, Logger: slog.New(s.applier)}) // every redelivery reaches DynamoDB's condition
	if err != nil {
		t.Fatal(err)
	}
	reader, err := claimcheck.NewReader(s.s3, claimcheck.ReaderConfig{Buckets: []string{s.bucket}})
	if err != nil {
		t.Fatal(err)
	}
	s.consumer, err = sqsbatch.NewFor(c.Engine(), sqsbatch.Config{Payloads: reader,
		Options: batch.Options{NoPacking: true, // each event's log line as it commits
			DeadLetter: deadletter.New(s.sqs, s.dlq)}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// deliver receives what the queue holds and hands it to the consumer as Lambda would, twice:
// the second time is SQS delivering the same messages again.
func (s *largeStack) deliver(t *testing.T) []sqstypes.Message {
	t.Helper()
	msgs := testkit.Drain(t, s.sqs, s.queue)
	ev := sqsbatch.EventOf(msgs, "arn:aws:sqs:us-east-1:000000000000:large.fifo")
	for range 2 {
		resp, err := s.consumer.Handle(context.Background(), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("Handle = %+v, %v; want every message acknowledged", resp, err)
		}
	}
	return msgs
}

func (s *largeStack) total(t *testing.T) int {
	t.Helper()
	out, err := s.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(s.app), ConsistentRead: aws.Bool(true),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "BLOBS"},
			"sk": &ddbtypes.AttributeValueMemberS{Value: "total"}}})
	if err != nil {
		t.Fatal(err)
	}
	var item struct{ Bytes int }
	if err := attributevalue.UnmarshalMap(out.Item, &item); err != nil {
		t.Fatal(err)
	}
	return item.Bytes
}

func blobEvent(t *testing.T, id string, blob string) cloudevent.Event {
	t.Helper()
	ev, err := cloudevent.New(id, "test", "blob.stored", "blob-group", time.Unix(0, 0), map[string]string{"blob": blob})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// The test: 3 MiB published with package publish goes through S3 and SQS to the
// consumer and is applied once, its redelivery a duplicate; the same payload behind a pointer
// written by hand, as the Java and Python extended clients write it, is read, and is a
// duplicate too (the record's hash is of the payload, not of the pointer).
func TestConsumer_applies_a_3_MiB_payload_through_S3_once(t *testing.T) {
	t.Parallel()
	s := newLargeStack(t)
	writer, err := claimcheck.NewWriter(s.s3, claimcheck.WriterConfig{Bucket: s.bucket})
	if err != nil {
		t.Fatal(err)
	}
	p, err := publish.New(s.sqs, publish.Config{ClaimCheck: writer})
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.Repeat("0123456789abcdef", 3<<20/16)
	ev := blobEvent(t, "blob-3mib", blob)
	if err := p.Publish(context.Background(), s.queue, ev); err != nil {
		t.Fatal(err)
	}
	msgs := s.deliver(t)
	if len(msgs) != 1 || len(aws.ToString(msgs[0].Body)) > 1024 || msgs[0].MessageAttributes[claimcheck.SizeAttribute].StringValue == nil {
		t.Fatalf("queue held %d messages; want one small pointer with its %s attribute", len(msgs), claimcheck.SizeAttribute)
	}
	if got := s.applier.take(); fmt.Sprint(got) != "[blob-3mib:applied blob-3mib:duplicate]" {
		t.Fatalf("outcomes %v; want applied, then the redelivery a duplicate", got)
	}
	if n := s.total(t); n != len(blob) {
		t.Fatalf("total %d; want %d: the 3 MiB blob applied once", n, len(blob))
	}

	// The same event from a Java producer (no spaces) and a new one from a Python producer
	// (json.dumps spacing), each an object of its own under a UUID key.
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := cloudevent.Encode(blobEvent(t, "blob-python", blob[:2<<20]))
	for key, payload := range map[string][]byte{"0f8fad5b-d9cb-469f-a165-70867728950e": body, "7c9e6679-7425-40de-944b-e07fc1f90ae7": other} {
		if _, err := s.s3.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key),
			Body: strings.NewReader(string(payload))}); err != nil {
			t.Fatal(err)
		}
	}
	java := fmt.Sprintf(`["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"%s","s3Key":"0f8fad5b-d9cb-469f-a165-70867728950e"}]`, s.bucket)
	python := fmt.Sprintf(`["software.amazon.payloadoffloading.PayloadS3Pointer", {"s3BucketName": "%s", "s3Key": "7c9e6679-7425-40de-944b-e07fc1f90ae7"}]`, s.bucket)
	for i, m := range []struct {
		body string
		size int
	}{{java, len(body)}, {python, len(other)}} {
		if _, err := s.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(s.queue), MessageBody: aws.String(m.body),
			MessageGroupId: aws.String("blob-group"), MessageDeduplicationId: aws.String(fmt.Sprint("by-hand-", i)),
			MessageAttributes: map[string]sqstypes.MessageAttributeValue{claimcheck.SizeAttribute: {DataType: aws.String("Number"),
				StringValue: aws.String(fmt.Sprint(m.size))}}}); err != nil {
			t.Fatal(err)
		}
	}
	if msgs := s.deliver(t); len(msgs) != 2 {
		t.Fatalf("queue held %d messages; want the 2 sent by hand", len(msgs))
	}
	if got := s.applier.take(); fmt.Sprint(got) != "[blob-3mib:duplicate blob-python:applied blob-3mib:duplicate blob-python:duplicate]" {
		t.Fatalf("outcomes %v; want the Java producer's copy a duplicate (not a conflict), the Python one applied once", got)
	}
	if n := s.total(t); n != len(blob)+2<<20 {
		t.Fatalf("total %d; want %d", n, len(blob)+2<<20)
	}
}

// A pointer to an object that is gone (expired by the bucket's lifecycle rule, or never
// written) can never be read: it is dead-lettered at once, with a reason that names it.
func TestConsumer_dead_letters_a_pointer_to_a_missing_object_naming_it(t *testing.T) {
	t.Parallel()
	s := newLargeStack(t)
	ptr := claimcheck.Pointer{Bucket: s.bucket, Key: "expired-key"}
	if _, err := s.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(s.queue), MessageBody: aws.String(ptr.Body()),
		MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("gone"),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{claimcheck.SizeAttribute: {DataType: aws.String("Number"), StringValue: aws.String("5000000")}}}); err != nil {
		t.Fatal(err)
	}
	msgs := testkit.Drain(t, s.sqs, s.queue)
	resp, err := s.consumer.Handle(context.Background(), sqsbatch.EventOf(msgs, "arn:aws:sqs:us-east-1:000000000000:large.fifo"))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle = %+v, %v; want the message dead-lettered and acknowledged", resp, err)
	}
	dead := testkit.Drain(t, s.sqs, s.dlq)
	if len(dead) != 1 {
		t.Fatalf("dead-letter queue holds %d messages; want 1", len(dead))
	}
	reason := aws.ToString(dead[0].MessageAttributes[deadletter.AttrReason].StringValue)
	if !strings.Contains(reason, "s3://"+s.bucket+"/expired-key") || !strings.Contains(reason, "no such object") {
		t.Fatalf("reason %q; want it to name the missing object", reason)
	}
	if aws.ToString(dead[0].Body) != ptr.Body() {
		t.Fatalf("dead letter body %q; want the pointer as received", aws.ToString(dead[0].Body))
	}
}
