package idempotency_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// The paths of docs/runbook.md, followed against the emulators with the group's live traffic
// going on.

// The runbook's path for a producer's bad message (malformed, or a conflict: an event id
// reused for another payload), with the group's live traffic going on throughout: discard
// the letter, then redrive. The held tail and the live messages are applied in their order,
// nothing twice, and a later redelivery of the discarded message is answered, never applied.
func TestRunbook_bad_message_discard_then_redrive_keeps_order(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bad  func(t *testing.T, r *recovery, id string) []string // sends the bad message; returns what it applied
	}{
		{"malformed", func(t *testing.T, r *recovery, id string) []string {
			r.poison(id)
			r.send(t, "g", id)
			return nil
		}},
		{"conflict", func(t *testing.T, r *recovery, id string) []string {
			r.sendAs(t, "g", id, id, map[string]string{"amount": "5"})
			r.consume(t)
			r.sendAs(t, "g", id, id+"-again", map[string]string{"amount": "50"}) // the producer reuses the id
			return []string{id}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRecovery(t)
			bad, b, c, d := t.Name()+"-bad", t.Name()+"-b", t.Name()+"-c", t.Name()+"-d"
			want := tt.bad(t, r, bad)
			r.send(t, "g", b)
			r.consume(t)
			r.send(t, "g", c) // live traffic while the group is held
			r.consume(t)
			r.wantApplied(t, "g", want...)

			rec := r.discard(t, bad)
			if tt.name == "malformed" && (rec.Outcome != string(idempotency.Discarded) || rec.Payload == "") {
				t.Errorf("discarded record = %+v; want the outcome discarded and the body kept", rec)
			}
			if tt.name == "conflict" { // the applied event's record stays, the letter's copy beside it
				cp, ok, err := r.admin.DiscardedCopy(t.Context(), r.consumer, bad)
				if err != nil || !ok || cp.Outcome != string(idempotency.Discarded) || !strings.Contains(cp.Payload, `"amount":"50"`) ||
					rec.Outcome != string(idempotency.Applied) {
					t.Errorf("conflict discarded: record %+v, copy %+v, %v, %v; want the applied record kept and the letter's body copied", rec, cp, ok, err)
				}
			}
			r.send(t, "g", d) // more live traffic between the discard and the redrive
			r.consume(t)
			r.wantApplied(t, "g", want...)

			r.redrive(t, dlq.RedriveConfig{}, nil)
			r.consume(t)
			want = append(want, b, c, d)
			r.wantApplied(t, "g", want...)

			if tt.name == "malformed" { // the producer sends the discarded message again
				r.sendAs(t, "g", bad, bad+"-resent", map[string]string{})
				r.consume(t)
			}
			e := t.Name() + "-e"
			r.send(t, "g", e)
			r.consume(t)
			r.wantApplied(t, "g", append(want, e)...)
			if n := r.letters(t); n != 0 && tt.name == "malformed" {
				t.Errorf("dead-letter queue holds %d letters; want none (the resent discarded message answered)", n)
			}
			if h, ok, err := r.admin.Hold(t.Context(), r.consumer, "g"); err != nil || ok {
				t.Errorf("hold at the end = %+v, %v, %v; want none", h, ok, err)
			}
		})
	}
}

// crash receives the source queue's messages and never answers, as an invocation that is
// killed does, until the queue's redrive policy (maxReceiveCount 1) has moved them all to the
// dead-letter queue.
func (r *recovery) crash(t *testing.T) {
	t.Helper()
	if _, err := r.sqs.SetQueueAttributes(t.Context(), &sqs.SetQueueAttributesInput{QueueUrl: aws.String(r.src), Attributes: map[string]string{
		"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"1"}`, r.dlqARN(t))}}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := r.sqs.SetQueueAttributes(t.Context(), &sqs.SetQueueAttributesInput{QueueUrl: aws.String(r.src),
			Attributes: map[string]string{"RedrivePolicy": ""}}); err != nil {
			t.Fatal(err)
		}
	}()
	testkit.Eventually(t, 10*time.Second, func() error {
		out, err := r.sqs.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(r.src), MaxNumberOfMessages: 10})
		if err != nil {
			return err
		}
		for _, m := range out.Messages {
			_, _ = r.sqs.ChangeMessageVisibility(t.Context(), &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(r.src),
				ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
		}
		if n := r.count(t, r.src); n > 0 {
			return fmt.Errorf("%d messages not moved yet", n)
		}
		return nil
	})
}

func (r *recovery) dlqARN(t *testing.T) string {
	t.Helper()
	out, err := r.sqs.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(r.dlq),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

// The runbook's path for a message the queue moved by its maxReceiveCount (every invocation
// that took it was killed): whether its effect was committed before the crash or not, a
// redrive to its source queue applies it exactly once. The letter names no source queue (SQS
// wrote it): the redrive sends it to the dead-letter queue's source, the queue whose redrive
// policy moved it (dlq.SourceQueue; the tool looks among the stack's queues), and only
// without that refuses it.
func TestRunbook_moved_by_the_queue_redrive_to_its_source_applies_it_once(t *testing.T) {
	t.Parallel()
	for _, committed := range []bool{false, true} {
		t.Run(fmt.Sprintf("committed before the crash %v", committed), func(t *testing.T) {
			t.Parallel()
			r := newRecovery(t)
			a := t.Name() + "-a"
			r.send(t, "g", a)
			if committed { // applied, then killed before the answer reached SQS
				ev, err := cloudevent.New(a, "test", "test.logged", "g", time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), map[string]string{})
				if err != nil {
					t.Fatal(err)
				}
				c, err := idempotency.New(r.db, idempotency.HandlerFunc(r.decide), idempotency.Config{Name: r.consumer, Table: r.idem,
					AfterDeadLetter: idempotency.HoldGroup, CacheSize: -1})
				if err != nil {
					t.Fatal(err)
				}
				if res, err := c.Apply(t.Context(), ev, port.Delivery{MessageID: "m-a", Group: "g"}); err != nil || res.Outcome != idempotency.Applied {
					t.Fatalf("apply before the crash = %+v, %v", res, err)
				}
			}
			r.crash(t)
			if n := r.letters(t); n != 1 {
				t.Fatalf("dead-letter queue holds %d letters; want the moved message", n)
			}
			got := r.redrive(t, dlq.RedriveConfig{}, nil) // the letter names no source queue
			if !slices.Equal(got[a], []dlq.Outcome{dlq.Failed}) {
				t.Errorf("redrive not knowing the source: %v; want failed (no source queue named)", got[a])
			}
			// the source queue's redrive policy, as deployed (crash set it to move at once)
			if _, err := r.sqs.SetQueueAttributes(t.Context(), &sqs.SetQueueAttributesInput{QueueUrl: aws.String(r.src), Attributes: map[string]string{
				"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"50"}`, r.dlqARN(t))}}); err != nil {
				t.Fatal(err)
			}
			src, ok, err := dlq.SourceQueue(t.Context(), r.sqs, r.dlq, []string{r.dlq, r.src})
			if err != nil || !ok || src != r.src {
				t.Fatalf("the dead-letter queue's source: %q, %v, %v; want %s, whose redrive policy moved the message", src, ok, err, r.src)
			}
			got = r.redrive(t, dlq.RedriveConfig{Source: src}, nil)
			if !slices.Equal(got[a], []dlq.Outcome{dlq.Moved}) {
				t.Errorf("redrive to the source: %v; want moved", got[a])
			}
			r.consume(t)
			r.wantApplied(t, "g", a)
			if n := r.letters(t); n != 0 {
				t.Errorf("dead-letter queue holds %d letters; want none", n)
			}
		})
	}
}
