package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
)

// meanwhile is an operator's answer that something else changes before it is read: what was
// shown is no longer what is there when the command writes.
type meanwhile struct {
	once   sync.Once
	do     func()
	answer io.Reader
}

func (m *meanwhile) Read(p []byte) (int, error) {
	m.once.Do(m.do)
	return m.answer.Read(p)
}

// answering runs the command like onceflow, with stdin as its input.
func (c *cloud) answering(t *testing.T, stdin io.Reader, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(t.Context(), append(args, c.localFlags()...), stdin, &out, &out)
	t.Logf("onceflow %s -> %d\n%s", strings.Join(args[:2], " "), code, out.String())
	return code, out.String()
}

// localFlags point the tool at this cloud, as onceflow passes them.
func (c *cloud) localFlags() []string {
	return []string{"--local", "--state", c.state}
}

// tableName is the name of the cloud's table of logical id id.
func (c *cloud) tableName(id string) string { return c.e.Tables[id] }

// ledger is a HoldGroup consumer "ledger" over the cloud's tables whose effect puts an entry
// per event in the app table.
func (c *cloud) ledger(t *testing.T) *idempotency.Consumer {
	t.Helper()
	app := c.tableName("AppTable")
	h := idempotency.HandlerFunc(func(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Put(app, map[string]string{"pk": "ENTRY#" + ev.ID, "sk": ev.Subject})}, nil
	})
	consumer, err := idempotency.New(c.db, h, idempotency.Config{Name: "ledger", Table: c.tableName("IdempotencyTable"),
		AfterDeadLetter: idempotency.HoldGroup, CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	return consumer
}

func apply(t *testing.T, consumer *idempotency.Consumer, id, group string) (idempotency.Result, error) {
	t.Helper()
	ev := event(t, id, "account.credited", group)
	return consumer.Apply(t.Context(), ev, port.Delivery{MessageID: "m-" + id, Group: group})
}

// The hold shown is replaced before the operator answers: its blocker was redriven and
// applied, and another message of the group was dead-lettered. hold release must not delete
// the new hold.
func TestHold_release_refuses_a_hold_replaced_meanwhile(t *testing.T) {
	c := newCloud(t)
	consumer := c.ledger(t)
	if err := holdAhead(t.Context(), consumer, "acct-1", port.Held{EventID: "debit-1", MessageID: "m-debit-1"}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	answer := &meanwhile{answer: strings.NewReader("y\n"), do: func() {
		if res, err := apply(t, consumer, "debit-1", "acct-1"); err != nil || res.Outcome != idempotency.Applied {
			t.Errorf("redriven blocker = %+v, %v; want applied", res, err)
		}
		if err := holdAhead(t.Context(), consumer, "acct-1", port.Held{EventID: "debit-2", MessageID: "m-debit-2"}, errors.New("failed 5 times")); err != nil {
			t.Error(err)
		}
	}}
	if code, out := c.answering(t, answer, "hold", "release", "--consumer", "ledger", "acct-1"); code != 1 || !strings.Contains(out, "changed") {
		t.Errorf("hold release of a replaced hold: exit %d; want 1 and what changed", code)
	}
	h, ok, err := operator.New(c.db, c.tableName("IdempotencyTable")).Hold(t.Context(), "ledger", "acct-1")
	if err != nil || !ok || h.BlockerEventID != "debit-2" {
		t.Errorf("hold after the refused release = %+v, %v, %v; want held behind debit-2", h, ok, err)
	}
}

// A lease shown in progress completes before the operator answers: record delete must not
// delete it, or a redelivery would call the webhook again.
func TestRecord_delete_refuses_a_lease_completed_meanwhile(t *testing.T) {
	c := newCloud(t)
	table := c.tableName("IdempotencyTable")
	put := func(rec operator.Record) {
		item, err := attributevalue.MarshalMap(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.db.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	lease := operator.Record{Key: operator.Key("note-notifier", "note-1"), Consumer: "note-notifier", EventID: "note-1",
		EventType: "note.created", ProcessedAt: now.UTC().Format(time.RFC3339Nano), MessageID: "m-1", ExpiresAt: now.Add(time.Hour).Unix(),
		Status: operator.StatusInProgress, Owner: "owner-1", LeaseExpiresAt: now.Add(time.Minute).UnixMilli()}
	put(lease)
	done := lease
	done.Status, done.Outcome, done.LeaseExpiresAt = operator.StatusCompleted, string(idempotency.Applied), 0
	answer := &meanwhile{answer: strings.NewReader("y\n"), do: func() { put(done) }}
	if code, out := c.answering(t, answer, "record", "delete", "--consumer", "note-notifier", "note-1"); code != 1 || !strings.Contains(out, "changed") {
		t.Errorf("record delete of a lease completed meanwhile: exit %d; want 1 and what changed", code)
	}
	rec, ok, err := operator.New(c.db, table).Record(t.Context(), "note-notifier", "note-1")
	if err != nil || !ok || rec.Status != operator.StatusCompleted {
		t.Errorf("record after the refused delete = %+v, %v, %v; want the completed lease kept", rec, ok, err)
	}
}

// hold skip lets the group go on past its blocker, the skip recorded, while the message held
// behind it keeps its place: it is applied next, then the group's live traffic.
func TestHold_skip_goes_on_past_the_blocker_with_the_held_tail_in_order(t *testing.T) {
	c := newCloud(t)
	consumer := c.ledger(t)
	admin := operator.New(c.db, c.tableName("IdempotencyTable"))
	if err := holdAhead(t.Context(), consumer, "acct-2", port.Held{EventID: "debit-1", MessageID: "m-debit-1"}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	if _, err := apply(t, consumer, "debit-2", "acct-2"); !errors.Is(err, idempotency.ErrHeld) {
		t.Fatalf("debit-2 while held: %v; want held", err)
	}
	if code, out := c.onceflow(t, "", "hold", "skip", "--consumer", "ledger", "--yes", "acct-2"); code != 2 || !strings.Contains(out, "--why") {
		t.Errorf("hold skip without --why: %d; want a usage error", code)
	}
	code, out := c.onceflow(t, "y\n", "hold", "skip", "--consumer", "ledger", "--why", "refunded by hand", "acct-2")
	if code != 0 || !strings.Contains(out, "now held behind event debit-2") {
		t.Errorf("hold skip: %d; want the group held behind debit-2 next", code)
	}
	h, _, err := admin.Hold(t.Context(), "ledger", "acct-2")
	if err != nil || len(h.Skipped) != 1 || h.Skipped[0].EventID != "debit-1" || h.Skipped[0].Why != "refunded by hand" {
		t.Errorf("hold after skip = %+v, %v; want debit-1 recorded as skipped, and why", h, err)
	}
	if res, err := apply(t, consumer, "debit-3", "acct-2"); !errors.Is(err, idempotency.ErrHeld) {
		t.Errorf("live debit-3 = %+v, %v; want it held behind debit-2", res, err)
	}
	for _, id := range []string{"debit-2", "debit-3"} { // redriven, in order
		if res, err := apply(t, consumer, id, "acct-2"); err != nil || res.Outcome != idempotency.Applied {
			t.Errorf("redriven %s = %+v, %v; want applied", id, res, err)
		}
	}
	if res, err := apply(t, consumer, "debit-4", "acct-2"); err != nil || res.Outcome != idempotency.Applied {
		t.Errorf("live debit-4 after the tail = %+v, %v; want applied", res, err)
	}
	if h, ok, err := admin.Hold(t.Context(), "ledger", "acct-2"); err != nil || ok || len(h.Skipped) != 1 {
		t.Errorf("hold at the end = %+v, %v, %v; want not held, the skip kept", h, ok, err)
	}
}

// hold skip refuses when the hold changed after it was shown.
func TestHold_skip_refuses_a_hold_changed_meanwhile(t *testing.T) {
	c := newCloud(t)
	consumer := c.ledger(t)
	if err := holdAhead(t.Context(), consumer, "acct-3", port.Held{EventID: "debit-1", MessageID: "m-debit-1"}, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	answer := &meanwhile{answer: strings.NewReader("y\n"), do: func() {
		if _, err := apply(t, consumer, "debit-2", "acct-3"); !errors.Is(err, idempotency.ErrHeld) {
			t.Errorf("debit-2: %v; want held", err)
		}
	}}
	if code, out := c.answering(t, answer, "hold", "skip", "--consumer", "ledger", "--why", "x", "acct-3"); code != 1 || !strings.Contains(out, "changed") {
		t.Errorf("hold skip of a changed hold: %d; want 1 and what changed", code)
	}
	h, ok, err := operator.New(c.db, c.tableName("IdempotencyTable")).Hold(t.Context(), "ledger", "acct-3")
	if err != nil || !ok || len(h.Held) != 2 || len(h.Skipped) != 0 {
		t.Errorf("hold = %+v, %v, %v; want debit-1 and debit-2 held, nothing skipped", h, ok, err)
	}
}

// dlq discard records the letter's event as discarded with its body, takes it off its group's
// hold so the group goes on, and deletes the letter; a redelivery is then answered, never
// applied.
func TestDLQ_discard_records_the_event_releases_its_group_and_deletes_the_letter(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	consumer := c.ledger(t)
	dlq := deadletter.New(c.sqs, c.e.Queues["LedgerDeadLetterQueue"].URL)
	ev := event(t, "bad-1", "account.credited", "acct-4")
	body, _ := cloudevent.Encode(ev)
	msg := events.SQSMessage{MessageId: "m-bad-1", Body: string(body), EventSourceARN: c.e.Queues["LedgerQueue"].ARN,
		Attributes: map[string]string{"MessageGroupId": "acct-4", "MessageDeduplicationId": "bad-1"}}
	reason := errors.New(`malformed message: data.amount: not a number`)
	if err := holdAhead(t.Context(), consumer, "acct-4", port.Held{EventID: "bad-1", MessageID: "m-bad-1"}, reason); err != nil {
		t.Fatal(err)
	}
	if err := dlq.DeadLetter(t.Context(), msg, reason); err != nil {
		t.Fatal(err)
	}
	if code, out := c.onceflow(t, "n\n", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "producer bug", "bad-1"); code != 1 || !strings.Contains(out, "never applied") {
		t.Errorf("dlq discard answered no: %d; want a refusal after saying what it does", code)
	}
	code, out := c.onceflow(t, "", "dlq", "discard", "--queue", "LedgerDeadLetterQueue", "--consumer", "ledger", "--why", "producer bug", "--by", "ops", "--yes", "bad-1")
	if code != 0 || !strings.Contains(out, "recorded ledger#bad-1 as discarded") || !strings.Contains(out, "deleted letter") || !strings.Contains(out, "not held") {
		t.Errorf("dlq discard: %d; want the record, the letter deleted and the group released", code)
	}
	if code, out := c.onceflow(t, "", "record", "get", "--consumer", "ledger", "bad-1"); code != 0 || !strings.Contains(out, `"outcome": "discarded"`) ||
		!strings.Contains(out, `"operator": "ops"`) || !strings.Contains(out, "producer bug") || !strings.Contains(out, `\"id\":\"bad-1\"`) {
		t.Errorf("record get: %d; want the discarded outcome, who, why and the body", code)
	}
	if code, out := c.onceflow(t, "", "dlq", "list", "--queue", "LedgerDeadLetterQueue"); code != 0 || strings.Contains(out, "bad-1") {
		t.Errorf("dlq list: %d; want the letter gone", code)
	}
	res, err := consumer.Apply(t.Context(), ev, port.Delivery{MessageID: "m-bad-1-again", Group: "acct-4"})
	if err != nil || res.Outcome != idempotency.Duplicate || res.Stored != idempotency.Discarded {
		t.Errorf("redelivery of the discarded event = %+v, %v; want a duplicate of the discarded one", res, err)
	}
	if res, err := apply(t, consumer, "credit-2", "acct-4"); err != nil || res.Outcome != idempotency.Applied {
		t.Errorf("the group's next event = %+v, %v; want applied", res, err)
	}
}

// holdAhead holds group behind e, dead-lettered for reason, as a port does before the
// transport moves e's message aside (port.Engine.HoldAhead).
func holdAhead(ctx context.Context, c *idempotency.Consumer, group string, e port.Held, reason error) error {
	e.Reason = reason.Error()
	_, err := c.Engine().HoldAhead(ctx, group, []port.Held{e})
	return err
}
