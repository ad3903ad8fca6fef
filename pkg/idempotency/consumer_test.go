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
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
)

func TestConsumer_new_event_is_applied_with_its_record(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.consumer(t, "counter")
	id := unique(t)
	msg := message(t, "m1", id, "test.counted", counted{Counter: id, By: 3})
	msg.Attributes["ApproximateReceiveCount"] = "2"

	res, err := process(context.Background(), c, msg)
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("Process = %+v, %v; want applied", res, err)
	}
	if got := f.counter(t, id); got != 3 {
		t.Errorf("counter = %d, want 3", got)
	}
	rec, ok := f.record(t, operator.Key("counter", id))
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
	c := f.consumer(t, "counter")
	id := unique(t)
	msg := message(t, "m1", id, "test.counted", counted{Counter: id, By: 1})
	before := f.requests.Total()
	if res, err := process(context.Background(), c, msg); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("first delivery = %+v, %v", res, err)
	}
	if n := f.requests.Total() - before; n != 1 {
		t.Errorf("a new event took %d DynamoDB requests (%s), want 1", n, f.requests)
	}
	// The function crashed after the commit: SQS delivers the same message again.
	before = f.requests.Total()
	res, err := process(context.Background(), c, redelivered(msg, 2))
	if err != nil || res.Outcome != idempotency.Duplicate || res.Stored != idempotency.Applied {
		t.Fatalf("redelivery = %+v, %v; want duplicate of applied", res, err)
	}
	if n := f.requests.Total() - before; n != 1 {
		t.Errorf("a duplicate took %d DynamoDB requests (%s), want 1: the failed transaction returns the record", n, f.requests)
	}
	if got := f.counter(t, id); got != 1 {
		t.Errorf("counter = %d after a redelivery, want 1", got)
	}
}

func TestConsumer_resend_with_new_message_and_dedup_ids_is_a_duplicate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.consumer(t, "counter")
	id := unique(t)
	first := message(t, "m1", id, "test.counted", counted{Counter: id, By: 1})
	first.Attributes["MessageDeduplicationId"] = "dedup-1"
	if _, err := process(context.Background(), c, first); err != nil {
		t.Fatal(err)
	}
	// Re-sent after the 5-minute dedup window: a new SQS message id and dedup id.
	again := message(t, "m2", id, "test.counted", counted{Counter: id, By: 1})
	again.Attributes["MessageDeduplicationId"] = "dedup-2"
	res, err := process(context.Background(), c, again)
	if err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("re-send = %+v, %v; want duplicate", res, err)
	}
	if got := f.counter(t, id); got != 1 {
		t.Errorf("counter = %d, want 1", got)
	}
}

func TestConsumer_same_id_with_another_payload_is_a_conflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.consumer(t, "counter")
	id := unique(t)
	if _, err := process(context.Background(), c, message(t, "m1", id, "test.counted", counted{Counter: id, By: 1})); err != nil {
		t.Fatal(err)
	}
	res, err := process(context.Background(), c, message(t, "m2", id, "test.counted", counted{Counter: id, By: 5}))
	if res.Outcome != idempotency.Conflict || !errors.Is(err, idempotency.ErrConflict) || !permanent(err) {
		t.Fatalf("Process = %+v, %v; want a permanent conflict", res, err)
	}
	if got := f.counter(t, id); got != 1 {
		t.Errorf("counter = %d, want 1 (the conflicting event must not apply)", got)
	}
	if !strings.Contains(f.logs.String(), `"level":"ERROR"`) || !strings.Contains(f.logs.String(), `"outcome":"conflict"`) {
		t.Errorf("a conflict must be logged as an error; logs:\n%s", f.logs)
	}
}

func TestConsumer_failed_effect_condition_is_rejected_and_remembered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.consumer(t, "capped")
	counter := unique(t)
	ctx := context.Background()
	if res, err := process(ctx, c, message(t, "m1", counter+"-a", "test.capped", counted{Counter: counter, By: 8})); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("first = %+v, %v", res, err)
	}
	over := message(t, "m2", counter+"-b", "test.capped", counted{Counter: counter, By: 5})
	res, err := process(ctx, c, over)
	if err != nil || res.Outcome != idempotency.Rejected || res.Reason != "over the cap" {
		t.Fatalf("over the cap = %+v, %v; want rejected with the write's reason", res, err)
	}
	rec, ok := f.record(t, operator.Key("capped", counter+"-b"))
	if !ok || rec.Outcome != "rejected" || rec.Reason != "over the cap" {
		t.Errorf("record = %+v (found %v), want outcome rejected with its reason", rec, ok)
	}
	// Room is made under the cap; the redelivered rejection must still give the same answer.
	if _, err := f.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(f.app), Key: counterKey(counter)}); err != nil {
		t.Fatal(err)
	}
	res, err = process(ctx, c, redelivered(over, 2))
	if err != nil || res.Outcome != idempotency.Duplicate || res.Stored != idempotency.Rejected || res.Reason != "over the cap" {
		t.Fatalf("redelivered rejection = %+v, %v; want duplicate of rejected", res, err)
	}
	if got := f.counter(t, counter); got != 0 {
		t.Errorf("counter = %d, want 0: a rejected event never applies", got)
	}
}

// A strict router's consumer (idempotency.Strict) refuses also what a tolerant one reads: a
// type it routes nowhere, a data field its type does not know.
func TestConsumer_malformed_messages_name_the_field(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.consumerFor(t, "counter", strictRouter(f))
	id := unique(t)
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
			res, err := process(context.Background(), c, sqsMessage("m-"+tc.name, tc.body, 1))
			var me *cloudevent.MalformedError
			if res.Outcome != idempotency.Malformed || !errors.As(err, &me) || !permanent(err) {
				t.Fatalf("Process = %+v, %v; want a permanent malformed error", res, err)
			}
			if me.Field != tc.field {
				t.Errorf("field = %q (%v), want %q", me.Field, err, tc.field)
			}
		})
	}
	if f.requests.Of("TransactWriteItems") != 0 {
		t.Errorf("malformed messages reached DynamoDB: %s", f.requests)
	}
}

// malformedEvents are decoded events no transport may have checked (a stream or Kinesis
// consumer builds its own): Apply itself refuses them.
func malformedEvents() []struct {
	name, field string
	ev          cloudevent.Event
} {
	ok, _ := cloudevent.New("ev-1", "test", "test.counted", "g", fixedTime, counted{Counter: "x", By: 1})
	noID, longID, noType := ok, ok, ok
	noID.ID, longID.ID, noType.Type = "", strings.Repeat("x", cloudevent.MaxIDLength+1), ""
	return []struct {
		name, field string
		ev          cloudevent.Event
	}{{"no id", "id", noID}, {"id too long", "id", longID}, {"no type", "type", noType}}
}

func TestConsumer_Apply_refuses_an_event_without_id_or_type_before_any_call(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	refusesMalformedEvents(t, f, f.consumer(t, "counter"))
}

// refusesMalformedEvents applies each of malformedEvents with a and checks that it is
// malformed, permanent, names its field, and sends nothing to DynamoDB.
func refusesMalformedEvents(t *testing.T, f *fixture, a applier) {
	t.Helper()
	for _, tc := range malformedEvents() {
		t.Run(tc.name, func(t *testing.T) {
			before := f.requests.Total()
			res, err := a.Apply(context.Background(), tc.ev, port.Delivery{MessageID: "m1"})
			var me *cloudevent.MalformedError
			if res.Outcome != idempotency.Malformed || !permanent(err) || !errors.As(err, &me) || me.Field != tc.field {
				t.Fatalf("Apply = %+v, %v; want malformed in field %s, permanent", res, err, tc.field)
			}
			if n := f.requests.Total() - before; n != 0 {
				t.Errorf("%d DynamoDB requests for a malformed event, want 0", n)
			}
		})
	}
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
			before := f.requests.Total()
			res, err := process(context.Background(), f.consumerFor(t, "c", h), message(t, "m", unique(t), "test.any", counted{Counter: "x", By: 1}))
			if res.Outcome != idempotency.Failed || !errors.Is(err, closed) || permanent(err) != tc.permanent {
				t.Fatalf("Process = %+v, %v (permanent %v); want failed, permanent %v", res, err, permanent(err), tc.permanent)
			}
			if n := f.requests.Total() - before; n != 0 {
				t.Errorf("%d DynamoDB requests after the handler failed, want 0", n)
			}
		})
	}
}

func TestConsumer_StorePayload_keeps_the_message_as_received(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.consumer(t, "counter", func(cfg *idempotency.Config) { cfg.StorePayload = true })
	id := unique(t)
	// An extension attribute the codec does not model must survive in the stored payload.
	body := `{"specversion":"1.0","id":"` + id + `","source":"s","type":"test.counted","traceparent":"00-abc-01","data":{"counter":"` + id + `","by":1}}`
	if res, err := process(context.Background(), c, sqsMessage("m1", body, 1)); err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("Process = %+v, %v", res, err)
	}
	if rec, _ := f.record(t, operator.Key("counter", id)); rec.Payload != body {
		t.Errorf("stored payload %q; want the message body %q", rec.Payload, body)
	}

	// Without a body (a transport that only has the decoded event), the event is stored.
	ev, _ := cloudevent.New(id+"-2", "s", "test.counted", "g", fixedTime, counted{Counter: id, By: 1})
	if _, err := c.Apply(context.Background(), ev, port.Delivery{}); err != nil {
		t.Fatal(err)
	}
	rec, _ := f.record(t, operator.Key("counter", ev.ID))
	if stored, err := cloudevent.Decode([]byte(rec.Payload)); err != nil || stored.PayloadHash() != ev.PayloadHash() {
		t.Errorf("stored payload %q (%v); want the event", rec.Payload, err)
	}
}

func TestConsumer_expired_record_is_treated_as_absent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.consumer(t, "counter")
	id := unique(t)
	// A record whose expiry has passed, which TTL has not deleted yet.
	old, err := attributevalue.MarshalMap(operator.Record{Key: operator.Key("counter", id), Consumer: "counter",
		EventID: id, Outcome: "applied", PayloadHash: "old", ExpiresAt: time.Now().Add(-time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.records), Item: old}); err != nil {
		t.Fatal(err)
	}
	res, err := process(context.Background(), c, message(t, "m1", id, "test.counted", counted{Counter: id, By: 1}))
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("Process = %+v, %v; want applied over an expired record", res, err)
	}
	if rec, _ := f.record(t, operator.Key("counter", id)); rec.ExpiresAt < time.Now().Unix() {
		t.Errorf("record still expired after the commit: %+v", rec)
	}
}

func TestConsumer_two_consumers_each_apply_an_event_once(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a, b := f.consumer(t, "a"), f.consumer(t, "b")
	id := unique(t)
	msg := message(t, "m1", id, "test.counted", counted{Counter: id, By: 1})
	for _, c := range []*idempotency.Consumer{a, b, a, b} {
		if _, err := process(context.Background(), c, msg); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.counter(t, id); got != 2 {
		t.Errorf("counter = %d, want 2 (once per consumer)", got)
	}
}

func TestConsumer_concurrent_deliveries_apply_once(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.consumer(t, "counter")
	id := unique(t)
	msg := message(t, "m1", id, "test.counted", counted{Counter: id, By: 1})
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
			res, err := process(ctx, c, msg)
			if err != nil && permanent(err) {
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
	if got := f.counter(t, id); got != 1 {
		t.Errorf("counter = %d after %d concurrent deliveries, want exactly 1", got, n)
	}
	// Any delivery that failed transiently is redelivered by SQS: it must end a duplicate.
	if count[idempotency.Failed] > 0 {
		res, err := process(context.Background(), c, redelivered(msg, 2))
		if err != nil || res.Outcome != idempotency.Duplicate {
			t.Errorf("redelivery after transient failures = %+v, %v", res, err)
		}
	}
}

func TestConsumer_local_cache_answers_a_redelivery_without_dynamodb(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.consumer(t, "counter", func(cfg *idempotency.Config) { cfg.CacheSize = 16 })
	id := unique(t)
	msg := message(t, "m1", id, "test.counted", counted{Counter: id, By: 1})
	if _, err := process(context.Background(), c, msg); err != nil {
		t.Fatal(err)
	}
	before := f.requests.Total()
	res, err := process(context.Background(), c, redelivered(msg, 2))
	if err != nil || res.Outcome != idempotency.Duplicate {
		t.Fatalf("cached redelivery = %+v, %v", res, err)
	}
	if n := f.requests.Total() - before; n != 0 {
		t.Errorf("a cached duplicate made %d DynamoDB requests, want 0", n)
	}
	// A different payload under the cached id is still a conflict.
	_, err = process(context.Background(), c, message(t, "m2", id, "test.counted", counted{Counter: id, By: 2}))
	if !errors.Is(err, idempotency.ErrConflict) {
		t.Errorf("cached conflict = %v, want ErrConflict", err)
	}
}

func TestConsumer_transient_failure_is_retried_then_reported(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.consumer(t, "counter", func(cfg *idempotency.Config) {
		cfg.Table = "no-such-table" // every commit fails until the configuration is fixed
		cfg.Retry = idempotency.Retry{MaxAttempts: 3, BaseDelay: time.Millisecond}
	})
	id := unique(t)
	res, err := process(context.Background(), c, message(t, "m1", id, "test.counted", counted{Counter: id, By: 1}))
	if res.Outcome != idempotency.Failed || err == nil || permanent(err) {
		t.Fatalf("Process = %+v, %v; want a non-permanent failure", res, err)
	}
	if n := f.requests.Of("TransactWriteItems"); n < 3 {
		t.Errorf("TransactWriteItems sent %d times, want 3 attempts (SDK retries may add more)", n)
	}
}
