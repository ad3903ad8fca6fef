package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/internal/apptest"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
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
	args = append(args, "--local", "--state", c.state, "--template", filepath.Join(apptest.Root(), "template.yaml"))
	code := run(t.Context(), args, stdin, &out, &out)
	t.Logf("onceflow %s -> %d\n%s", strings.Join(args[:2], " "), code, out.String())
	return code, out.String()
}

// ledger is a HoldGroup consumer "ledger" over the cloud's tables whose effect puts an entry
// per event in the app table.
func (c *cloud) ledger(t *testing.T) *idempotency.Consumer {
	t.Helper()
	app := c.e.Tables["AppTable"].Name
	h := idempotency.HandlerFunc(func(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Put(app, map[string]string{"pk": "ENTRY#" + ev.ID, "sk": ev.Subject})}, nil
	})
	consumer, err := idempotency.New(c.db, h, idempotency.Config{Name: "ledger", Table: c.e.Tables["IdempotencyTable"].Name,
		AfterDeadLetter: idempotency.HoldGroup, CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	return consumer
}

func apply(t *testing.T, consumer *idempotency.Consumer, id, group string) (idempotency.Result, error) {
	t.Helper()
	ev := event(t, id, "account.credited", group)
	return consumer.Apply(t.Context(), ev, idempotency.Delivery{MessageID: "m-" + id, Group: group})
}

// The hold shown is replaced before the operator answers: its blocker was redriven and
// applied, and another message of the group was dead-lettered. hold release must not delete
// the new hold.
func TestHold_release_refuses_a_hold_replaced_meanwhile(t *testing.T) {
	c := newCloud(t)
	consumer := c.ledger(t)
	if err := consumer.HoldGroup(t.Context(), "acct-1", "debit-1", "m-debit-1", errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	answer := &meanwhile{answer: strings.NewReader("y\n"), do: func() {
		if res, err := apply(t, consumer, "debit-1", "acct-1"); err != nil || res.Outcome != idempotency.Applied {
			t.Errorf("redriven blocker = %+v, %v; want applied", res, err)
		}
		if err := consumer.HoldGroup(t.Context(), "acct-1", "debit-2", "m-debit-2", errors.New("failed 5 times")); err != nil {
			t.Error(err)
		}
	}}
	if code, out := c.answering(t, answer, "hold", "release", "--consumer", "ledger", "acct-1"); code != 1 || !strings.Contains(out, "changed") {
		t.Errorf("hold release of a replaced hold: exit %d; want 1 and what changed", code)
	}
	h, ok, err := idempotency.NewAdmin(c.db, c.e.Tables["IdempotencyTable"].Name).Hold(t.Context(), "ledger", "acct-1")
	if err != nil || !ok || h.BlockerEventID != "debit-2" {
		t.Errorf("hold after the refused release = %+v, %v, %v; want held behind debit-2", h, ok, err)
	}
}

// A lease shown in progress completes before the operator answers: record delete must not
// delete it, or a redelivery would call the webhook again.
func TestRecord_delete_refuses_a_lease_completed_meanwhile(t *testing.T) {
	c := newCloud(t)
	table := c.e.Tables["IdempotencyTable"].Name
	put := func(rec idempotency.Record) {
		item, err := attributevalue.MarshalMap(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.db.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	lease := idempotency.Record{Key: idempotency.Key("note-notifier", "note-1"), Consumer: "note-notifier", EventID: "note-1",
		EventType: "note.created", ProcessedAt: now.UTC().Format(time.RFC3339Nano), MessageID: "m-1", ExpiresAt: now.Add(time.Hour).Unix(),
		Status: idempotency.StatusInProgress, Owner: "owner-1", LeaseExpiresAt: now.Add(time.Minute).UnixMilli()}
	put(lease)
	done := lease
	done.Status, done.Outcome, done.LeaseExpiresAt = idempotency.StatusCompleted, string(idempotency.Applied), 0
	answer := &meanwhile{answer: strings.NewReader("y\n"), do: func() { put(done) }}
	if code, out := c.answering(t, answer, "record", "delete", "--consumer", "note-notifier", "note-1"); code != 1 || !strings.Contains(out, "changed") {
		t.Errorf("record delete of a lease completed meanwhile: exit %d; want 1 and what changed", code)
	}
	rec, ok, err := idempotency.NewAdmin(c.db, table).Record(t.Context(), "note-notifier", "note-1")
	if err != nil || !ok || rec.Status != idempotency.StatusCompleted {
		t.Errorf("record after the refused delete = %+v, %v, %v; want the completed lease kept", rec, ok, err)
	}
}

var _ = fmt.Sprint
var _ = events.SQSMessage{}
var _ = deadletter.Hold
