package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
)

func TestConsumer_new_event_is_applied_with_its_record(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter")
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 3})
	msg.Attributes["ApproximateReceiveCount"] = "2"

	res, err := applytest.Process(context.Background(), c, msg)
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("Process = %+v, %v; want applied", res, err)
	}
	if got := f.Counter(t, id); got != 3 {
		t.Errorf("counter = %d, want 3", got)
	}
	rec, ok := f.Record(t, operator.Key("counter", id))
	if !ok {
		t.Fatal("no idempotency record written")
	}
	ev, _ := cloudevent.Decode([]byte(msg.Body))
	want := operator.Record{Key: "counter#" + id, Consumer: "counter", EventID: id, EventType: "test.counted",
		OccurredAt: "2026-11-30T10:00:00Z", Outcome: "applied", PayloadHash: ev.PayloadHash(), MessageID: "m1",
		SequenceNumber: "1000m1", ReceiveCount: 2, Group: "group-1"}
	got := rec
	got.ProcessedAt, got.ExpiresAt = "", 0
	if got != want {
		t.Errorf("record = %+v\nwant     %+v", got, want)
	}
	processed, err := time.Parse(time.RFC3339Nano, rec.ProcessedAt)
	if err != nil || time.Since(processed) > time.Minute {
		t.Errorf("processedAt = %q, want about now", rec.ProcessedAt)
	}
	if ttl := time.Until(time.Unix(rec.ExpiresAt, 0)); ttl < 14*24*time.Hour {
		t.Errorf("record expires in %v, want the default retention of at least 14 days", ttl)
	}
}

func TestConsumer_redelivery_after_commit_is_a_duplicate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter")
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	before := f.Requests.Total()
	if res, err := applytest.Process(context.Background(), c, msg); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("first delivery = %+v, %v", res, err)
	}
	if n := f.Requests.Total() - before; n != 1 {
		t.Errorf("a new event took %d DynamoDB requests (%s), want 1", n, f.Requests)
	}
	// The function crashed after the commit: SQS delivers the same message again.
	before = f.Requests.Total()
	res, err := applytest.Process(context.Background(), c, applytest.Redelivered(msg, 2))
	if err != nil || res.Outcome != idempotency.Duplicate || res.Stored != idempotency.Applied {
		t.Fatalf("redelivery = %+v, %v; want duplicate of applied", res, err)
	}
	if n := f.Requests.Total() - before; n != 1 {
		t.Errorf("a duplicate took %d DynamoDB requests (%s), want 1: the failed transaction returns the record", n, f.Requests)
	}
	if got := f.Counter(t, id); got != 1 {
		t.Errorf("counter = %d after a redelivery, want 1", got)
	}
}

func TestConsumer_resend_with_new_message_and_dedup_ids_is_a_duplicate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter")
	id := applytest.Unique(t)
	first := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	first.Attributes["MessageDeduplicationId"] = "dedup-1"
	if _, err := applytest.Process(context.Background(), c, first); err != nil {
		t.Fatal(err)
	}
	// Re-sent after the 5-minute dedup window: a new SQS message id and dedup id.
	again := applytest.Message(t, "m2", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	again.Attributes["MessageDeduplicationId"] = "dedup-2"
	res, err := applytest.Process(context.Background(), c, again)
	if err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("re-send = %+v, %v; want duplicate", res, err)
	}
	if got := f.Counter(t, id); got != 1 {
		t.Errorf("counter = %d, want 1", got)
	}
}

func TestConsumer_same_id_with_another_payload_is_a_conflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter")
	id := applytest.Unique(t)
	if _, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})); err != nil {
		t.Fatal(err)
	}
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m2", id, "test.counted", applytest.Counted{Counter: id, By: 5}))
	if res.Outcome != idempotency.Conflict || !errors.Is(err, idempotency.ErrConflict) || !idempotency.IsPermanent(err) {
		t.Fatalf("Process = %+v, %v; want a permanent conflict", res, err)
	}
	if got := f.Counter(t, id); got != 1 {
		t.Errorf("counter = %d, want 1 (the conflicting event must not apply)", got)
	}
	if !strings.Contains(f.Logs.String(), `"level":"ERROR"`) || !strings.Contains(f.Logs.String(), `"outcome":"conflict"`) {
		t.Errorf("a conflict must be logged as an error; logs:\n%s", f.Logs)
	}
}

func TestConsumer_failed_effect_condition_is_rejected_and_remembered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "capped")
	counter := applytest.Unique(t)
	ctx := context.Background()
	if res, err := applytest.Process(ctx, c, applytest.Message(t, "m1", counter+"-a", "test.capped", applytest.Counted{Counter: counter, By: 8})); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("first = %+v, %v", res, err)
	}
	over := applytest.Message(t, "m2", counter+"-b", "test.capped", applytest.Counted{Counter: counter, By: 5})
	res, err := applytest.Process(ctx, c, over)
	if err != nil || res.Outcome != idempotency.Rejected || res.Reason != "over the cap" {
		t.Fatalf("over the cap = %+v, %v; want rejected with the write's reason", res, err)
	}
	rec, ok := f.Record(t, operator.Key("capped", counter+"-b"))
	if !ok || rec.Outcome != "rejected" || rec.Reason != "over the cap" {
		t.Errorf("record = %+v (found %v), want outcome rejected with its reason", rec, ok)
	}
	// Room is made under the cap; the redelivered rejection must still give the same answer.
	if _, err := f.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(f.App), Key: applytest.CounterKey(counter)}); err != nil {
		t.Fatal(err)
	}
	res, err = applytest.Process(ctx, c, applytest.Redelivered(over, 2))
	if err != nil || res.Outcome != idempotency.Duplicate || res.Stored != idempotency.Rejected || res.Reason != "over the cap" {
		t.Fatalf("redelivered rejection = %+v, %v; want duplicate of rejected", res, err)
	}
	if got := f.Counter(t, counter); got != 0 {
		t.Errorf("counter = %d, want 0: a rejected event never applies", got)
	}
}

// A strict router's consumer (idempotency.Strict) refuses also what a tolerant one reads: a
// type it routes nowhere, a data field its type does not know.
func TestConsumer_malformed_messages_name_the_field(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.ConsumerFor(t, "counter", strictRouter(f))
	id := applytest.Unique(t)
	cases := []struct {
		name, body, field string
	}{
		{"undecodable", `{"id":`, "body"},
		{"no id", `{"specversion":"1.0","source":"s","type":"test.counted","data":{"counter":"x","by":1}}`, "id"},
		{"unknown type", `{"specversion":"1.0","id":"` + id + `-1","source":"s","type":"test.nope","data":{}}`, "type"},
		{"invalid data", `{"specversion":"1.0","id":"` + id + `-2","source":"s","type":"test.counted","data":{"counter":"x","by":-1}}`, "data.by"},
		{"wrong data type", `{"specversion":"1.0","id":"` + id + `-3","source":"s","type":"test.counted","data":{"counter":"x","by":"one"}}`, "data.by"},
		{"unknown data field", `{"specversion":"1.0","id":"` + id + `-4","source":"s","type":"test.counted","data":{"counter":"x","by":1,"extra":true}}`, "data"},
		{"a data member twice", `{"specversion":"1.0","id":"` + id + `-5","source":"s","type":"test.counted","data":{"counter":"x","by":1,"by":2}}`, "data.by"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := applytest.Process(context.Background(), c, applytest.SQSMessage("m-"+tc.name, tc.body, 1))
			var me *cloudevent.MalformedError
			if res.Outcome != idempotency.Malformed || !errors.As(err, &me) || !idempotency.IsPermanent(err) {
				t.Fatalf("Process = %+v, %v; want a permanent malformed error", res, err)
			}
			if me.Field != tc.field {
				t.Errorf("field = %q (%v), want %q", me.Field, err, tc.field)
			}
		})
	}
	if f.Requests.Of("TransactWriteItems") != 0 {
		t.Errorf("malformed messages reached DynamoDB: %s", f.Requests)
	}
}

func TestConsumer_Apply_refuses_an_event_without_id_or_type_before_any_call(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	applytest.RefusesMalformedEvents(t, f.Fixture, f.Consumer(t, "counter"))
}

// A handler's own "never retry this" follows the one rule: the message fails permanently (to be
// dead-lettered with the reason), nothing is committed, and other errors stay retryable.
func TestConsumer_a_handler_error_marked_Permanent_is_not_retried(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	closed := errors.New("account closed")
	for _, tc := range []struct {
		name      string
		err       error
		permanent bool
	}{{"permanent", idempotency.Permanent(closed), true}, {"transient", closed, false}} {
		t.Run(tc.name, func(t *testing.T) {
			h := idempotency.HandlerFunc(func(context.Context, cloudevent.Event) (idempotency.Effect, error) { return nil, tc.err })
			before := f.Requests.Total()
			res, err := applytest.Process(context.Background(), f.ConsumerFor(t, "c", h), applytest.Message(t, "m", applytest.Unique(t), "test.any", applytest.Counted{Counter: "x", By: 1}))
			if res.Outcome != idempotency.Failed || !errors.Is(err, closed) || idempotency.IsPermanent(err) != tc.permanent {
				t.Fatalf("Process = %+v, %v (permanent %v); want failed, permanent %v", res, err, idempotency.IsPermanent(err), tc.permanent)
			}
			if n := f.Requests.Total() - before; n != 0 {
				t.Errorf("%d DynamoDB requests after the handler failed, want 0", n)
			}
		})
	}
}

func TestConsumer_StorePayload_keeps_the_message_as_received(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter", func(cfg *idempotency.Config) { cfg.StorePayload = true })
	id := applytest.Unique(t)
	// An extension attribute the codec does not model must survive in the stored payload.
	body := `{"specversion":"1.0","id":"` + id + `","source":"s","type":"test.counted","traceparent":"00-abc-01","data":{"counter":"` + id + `","by":1}}`
	if res, err := applytest.Process(context.Background(), c, applytest.SQSMessage("m1", body, 1)); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("Process = %+v, %v", res, err)
	}
	if rec, _ := f.Record(t, operator.Key("counter", id)); rec.Payload != body {
		t.Errorf("stored payload %q; want the message body %q", rec.Payload, body)
	}

	// Without a body (a transport that only has the decoded event), the event is stored.
	ev, _ := cloudevent.New(id+"-2", "s", "test.counted", "g", applytest.Time, applytest.Counted{Counter: id, By: 1})
	if _, err := c.Apply(context.Background(), ev, port.Delivery{}); err != nil {
		t.Fatal(err)
	}
	rec, _ := f.Record(t, operator.Key("counter", ev.ID))
	if stored, err := cloudevent.Decode([]byte(rec.Payload)); err != nil || stored.PayloadHash() != ev.PayloadHash() {
		t.Errorf("stored payload %q (%v); want the event", rec.Payload, err)
	}
}

func TestConsumer_expired_record_is_treated_as_absent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter")
	id := applytest.Unique(t)
	// A record whose expiry has passed, which TTL has not deleted yet.
	old, err := attributevalue.MarshalMap(operator.Record{Key: operator.Key("counter", id), Consumer: "counter",
		EventID: id, Outcome: "applied", PayloadHash: "old", ExpiresAt: time.Now().Add(-time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.Records), Item: old}); err != nil {
		t.Fatal(err)
	}
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("Process = %+v, %v; want applied over an expired record", res, err)
	}
	if rec, _ := f.Record(t, operator.Key("counter", id)); rec.ExpiresAt < time.Now().Unix() {
		t.Errorf("record still expired after the commit: %+v", rec)
	}
}

func TestConsumer_two_consumers_each_apply_an_event_once(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a, b := f.Consumer(t, "a"), f.Consumer(t, "b")
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	for _, c := range []*idempotency.Consumer{a, b, a, b} {
		if _, err := applytest.Process(context.Background(), c, msg); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.Counter(t, id); got != 2 {
		t.Errorf("counter = %d, want 2 (once per consumer)", got)
	}
}

func TestConsumer_concurrent_deliveries_apply_once(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter")
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	const n = 50
	outcomes := make(chan idempotency.Outcome, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := applytest.Process(ctx, c, msg)
			if err != nil && idempotency.IsPermanent(err) {
				t.Errorf("permanent error under concurrency: %v", err)
			}
			outcomes <- res.Outcome
		}()
	}
	close(start)
	wg.Wait()
	close(outcomes)
	count := map[idempotency.Outcome]int{}
	for o := range outcomes {
		count[o]++
	}
	if count[idempotency.Applied] != 1 || count[idempotency.Duplicate]+count[idempotency.Failed] != n-1 {
		t.Errorf("outcomes = %v, want exactly 1 applied and the rest duplicate (or failed for a redelivery)", count)
	}
	if got := f.Counter(t, id); got != 1 {
		t.Errorf("counter = %d after %d concurrent deliveries, want exactly 1", got, n)
	}
	// Any delivery that failed transiently is redelivered by SQS: it must end a duplicate.
	if count[idempotency.Failed] > 0 {
		res, err := applytest.Process(context.Background(), c, applytest.Redelivered(msg, 2))
		if err != nil || res.Outcome != idempotency.Duplicate {
			t.Errorf("redelivery after transient failures = %+v, %v", res, err)
		}
	}
}

func TestConsumer_local_cache_answers_a_redelivery_without_dynamodb(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter", func(cfg *idempotency.Config) { cfg.CacheSize = 16 })
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	if _, err := applytest.Process(context.Background(), c, msg); err != nil {
		t.Fatal(err)
	}
	before := f.Requests.Total()
	res, err := applytest.Process(context.Background(), c, applytest.Redelivered(msg, 2))
	if err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("cached redelivery = %+v, %v", res, err)
	}
	if n := f.Requests.Total() - before; n != 0 {
		t.Errorf("a cached duplicate made %d DynamoDB requests, want 0", n)
	}
	// A different payload under the cached id is still a conflict.
	_, err = applytest.Process(context.Background(), c, applytest.Message(t, "m2", id, "test.counted", applytest.Counted{Counter: id, By: 2}))
	if !errors.Is(err, idempotency.ErrConflict) {
		t.Errorf("cached conflict = %v, want ErrConflict", err)
	}
}

func TestConsumer_transient_failure_is_retried_then_reported(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.Consumer(t, "counter", func(cfg *idempotency.Config) {
		cfg.Table = "no-such-table" // every commit fails until the configuration is fixed
		cfg.Retry = idempotency.Retry{MaxAttempts: 3, BaseDelay: time.Millisecond}
	})
	id := applytest.Unique(t)
	res, err := applytest.Process(context.Background(), c, applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1}))
	if res.Outcome != idempotency.Failed || err == nil || idempotency.IsPermanent(err) {
		t.Fatalf("Process = %+v, %v; want a non-permanent failure", res, err)
	}
	if n := f.Requests.Of("TransactWriteItems"); n < 3 {
		t.Errorf("TransactWriteItems sent %d times, want 3 attempts (SDK retries may add more)", n)
	}
}
