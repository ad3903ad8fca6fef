package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
)

// A letter whose event its consumer has decided already (a discard whose delete of the letter
// failed, so it was discarded once more; an applied event's copy that reached the queue) is a
// copy of a decided event: dlq discard deletes it, saying what decided the event, instead of
// refusing it for good ("applied or decided already"), which left it in the queue and its
// alarm on. Nothing is recorded over the decision.
func TestRecovery_dlq_discard_of_a_decided_events_letter_deletes_it_saying_so(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		decided string // the record's outcome
		decide  func(t *testing.T, f *pipeline)
	}{
		{"discarded once already", "discarded", func(t *testing.T, f *pipeline) {
			f.set(f.malformed, true, "x")
			f.sendNew(t, "acct", "x")
			f.consume(t)
			f.letter(t, "acct", "x", "m-x-copy") // its copy, as if the first discard's delete had failed
			if code, out := f.cli(t, "dlq", "discard", "--why", "producer bug", "x"); code != 0 || !strings.Contains(out, "deleted letter") {
				t.Fatalf("the first dlq discard: exit %d", code)
			}
		}},
		{"applied", "applied", func(t *testing.T, f *pipeline) {
			f.sendNew(t, "acct", "x")
			f.consume(t)
			f.letter(t, "acct", "x", "m-x-copy")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			f := c.pipeline(t, pipelineConfig{})
			tt.decide(t, f)
			if n := f.letters(t); n != 1 {
				t.Fatalf("the dead-letter queue holds %d letters; want x's copy", n)
			}
			code, out := f.cli(t, "dlq", "discard", "--why", "a copy", "x")
			if code != 0 || !strings.Contains(out, "was "+tt.decided+" already") || !strings.Contains(out, "deleted letter") {
				t.Errorf("dlq discard of a decided event's letter: exit %d, %s; want it deleted, saying x was %s already", code, lastLines(out, 3), tt.decided)
			}
			if n := f.letters(t); n != 0 {
				t.Errorf("the dead-letter queue holds %d letters; want none", n)
			}
			if rec, ok, err := f.admin.Record(t.Context(), "ledger", "x"); err != nil || !ok || rec.Outcome != tt.decided {
				t.Errorf("x's record = %+v, %v, %v; want its decision (%s) kept", rec, ok, err, tt.decided)
			}
			f.wantFree(t, "acct", "after the discard,")
		})
	}
}

// letter puts a letter of event id of group in the dead-letter queue, as the consumer
// dead-letters a message of id msgID.
func (f *pipeline) letter(t *testing.T, group, id, msgID string) {
	t.Helper()
	ev, err := cloudevent.New(id, "test", "account.credited", group, fixedEventTime, map[string]int{"amount": 5})
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	msg := events.SQSMessage{MessageId: msgID, Body: string(body), EventSourceARN: f.srcARN,
		Attributes: map[string]string{"MessageGroupId": group, "MessageDeduplicationId": id, "ApproximateReceiveCount": "2"}}
	if err := deadletter.New(f.c.sqs, f.dlq).DeadLetter(t.Context(), msg, errors.New("failed 2 times: downstream unavailable")); err != nil {
		t.Fatal(err)
	}
}
