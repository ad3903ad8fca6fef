package sqsbatch_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/lease"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// calls is a side effect that counts its runs by idempotency key.
type calls struct {
	mu  sync.Mutex
	ran []string
}

func (c *calls) Run(_ context.Context, _ cloudevent.Event, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ran = append(c.ran, key)
	return nil
}

func (c *calls) keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ran)
}

// In lease mode a denied claim (the lease's conditional PutItem) leaves the message for
// redelivery before the side effect runs; a denied completion (its UpdateItem) after the
// effect ran leaves it too, the record in progress until its lease runs out, when a delivery
// takes it over and runs the effect again with the same idempotency key (the lease mode's
// at-least-once, as after any failed completion). Neither is counted against the message or
// dead-letters it; each is logged naming the permission. Granted, the event completes.
func TestProcessor_a_denied_lease_call_leaves_the_message_for_redelivery(t *testing.T) {
	for _, tt := range []struct {
		name, action   string
		ranWhileDenied bool
	}{{"claim", "dynamodb:PutItem", false}, {"completion", "dynamodb:UpdateItem", true}} {
		t.Run(tt.name, func(t *testing.T) {
			s := newDeniedStack(t, 0)
			db, ddb := fault.DynamoDBDenying(t)
			logger, logs := testenv.NewLogs()
			recorder, emf := testenv.NewEMF(map[string]string{"Consumer": "notifier"})
			effect, clock := &calls{}, testkit.NewClock()
			const length = time.Minute
			c, err := lease.New(db, effect, lease.Config{Lease: length, Config: idempotency.Config{
				Name: "notifier", Table: s.records, Logger: logger, Metrics: recorder, CacheSize: -1, Now: clock.Now}})
			if err != nil {
				t.Fatal(err)
			}
			p, err := sqsbatch.NewFor(c.Engine(), sqsbatch.Config{Options: batch.Options{DeadLetter: s.r}})
			if err != nil {
				t.Fatal(err)
			}
			ddb.Set(fault.Deny{Action: tt.action, Prefix: "notifier#"})
			q := newFIFOQueue(t, 50, "a/1")
			for range port.DefaultMaxAttempts + 2 {
				ev := q.receive()
				resp := handle(t, p, t.Context(), ev)
				q.settle(ev, resp)
				if len(resp.BatchItemFailures) != 1 {
					t.Fatalf("failures %v; want a/1 left for redelivery", resp.BatchItemFailures)
				}
				clock.Advance(length + time.Second) // the next delivery finds the lease run out: SQS's visibility timeout is longer
			}
			testenv.CheckDenied(t, logs, emf, tt.action, "AccessDeniedException")
			if ran := effect.keys(); (len(ran) > 0) != tt.ranWhileDenied {
				t.Errorf("side effect ran %v while denied; want it run: %v", ran, tt.ranWhileDenied)
			}
			admin := operator.New(s.r.db, s.records)
			if at, ok, _ := admin.Attempts(t.Context(), "notifier", s.r.eventID(t, "a/1")); ok {
				t.Errorf("failed attempts %+v; want none counted for a denial", at)
			}
			if len(s.r.deadIDs()) != 0 {
				t.Errorf("dead-lettered %v; want nothing for a denial", s.r.deadIDs())
			}

			ddb.Set() // granted
			q.drain(t, p)
			if len(q.redriven) != 0 {
				t.Errorf("the queue moved %v; want a/1 completed once granted, before maxReceiveCount", q.redriven)
			}
			rec, ok, err := admin.Record(t.Context(), "notifier", s.r.eventID(t, "a/1"))
			if err != nil || !ok || rec.Status != operator.StatusCompleted {
				t.Errorf("record %+v, %v, %v; want it completed once granted", rec, ok, err)
			}
			for _, k := range effect.keys() {
				if k != operator.Key("notifier", s.r.eventID(t, "a/1")) {
					t.Errorf("side effect ran with key %s; want the event's one key every time", k)
				}
			}
		})
	}
}
