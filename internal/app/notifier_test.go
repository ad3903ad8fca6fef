package app_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/internal/notify"
	"github.com/onceflow/onceflow/internal/webhooktest"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// webhook is a loopback receiver of the note-notifier's calls; it answers 200 until told
// otherwise.
type webhook struct{ *webhooktest.Receiver }

func newWebhook(t *testing.T) *webhook {
	return &webhook{webhooktest.Start(t)}
}

// answer makes the webhook answer status after delay to every later call.
func (w *webhook) answer(status int, delay time.Duration) {
	w.Respond(func(webhooktest.Call) int {
		time.Sleep(delay)
		return status
	})
}

// keys returns the Idempotency-Key of every call so far, in order.
func (w *webhook) keys() []string { return w.Keys() }

// hookKey is the Idempotency-Key the note-notifier sends for the note.created event of note.
func hookKey(note string) string {
	return notify.IdempotencyKey(operator.Key("note-notifier", "note-created-"+note))
}

func failures(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	slices.Sort(ids)
	return ids
}

func messageIDs(ev events.SQSEvent) []string {
	var ids []string
	for _, r := range ev.Records {
		ids = append(ids, r.MessageId)
	}
	slices.Sort(ids)
	return ids
}

func TestNoteNotifier_calls_the_webhook_once_per_sample_note_across_redelivery(t *testing.T) {
	s := newSystem(t)
	handle(t, s.notifier, sqsSample(t, "note-notifier-batch.json"))
	handle(t, s.notifier, sqsSample(t, "note-notifier-redelivered.json"))
	handle(t, s.notifier, sqsSample(t, "note-notifier-batch.json"))

	got := s.hook.keys()
	slices.Sort(got)
	want := []string{hookKey("note-7f3a"), hookKey("note-91c2")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("webhook keys = %v; want one call per note: %v", got, want)
	}
	recs := s.items(t, s.idem, "note-notifier#")
	if len(recs) != 2 {
		t.Fatalf("records = %v; want two", recs)
	}
	for _, r := range recs {
		if r["status"] != operator.StatusCompleted || r["outcome"] != string(idempotency.Applied) || r["leaseExpiresAt"] != nil {
			t.Errorf("record %v; want completed, applied, no lease", r)
		}
	}
}

func TestNoteNotifier_a_failing_webhook_fails_the_messages_and_the_retry_sends_the_same_keys(t *testing.T) {
	s := newSystem(t)
	batch := sqsSample(t, "note-notifier-batch.json")
	s.hook.answer(http.StatusServiceUnavailable, 0)
	resp, err := s.notifier.Handle(ctx(t), batch)
	if err != nil || !slices.Equal(failures(resp), messageIDs(batch)) {
		t.Fatalf("failures %v, err %v; want every message failed for SQS to redeliver", failures(resp), err)
	}
	// What stays is each event's count of failed attempts (for dead-lettering after
	// port.DefaultMaxAttempts), never a lease record.
	recs := slices.DeleteFunc(s.items(t, s.idem, ""), func(r map[string]any) bool {
		return strings.HasPrefix(fmt.Sprint(r["pk"]), "#attempts#") && r["attempts"] == 1.0
	})
	if len(recs) != 0 {
		t.Fatalf("records after the failed calls = %v; want them released", recs)
	}
	s.hook.answer(http.StatusOK, 0)
	handle(t, s.notifier, sqsSample(t, "note-notifier-redelivered.json"))

	count := map[string]int{}
	for _, k := range s.hook.keys() {
		count[k]++
	}
	if len(count) != 2 || count[hookKey("note-7f3a")] != 2 || count[hookKey("note-91c2")] != 2 {
		t.Fatalf("webhook keys %v; want each note's key twice (503, then 200)", count)
	}
	if got := testkit.Drain(t, s.sqs, s.notificationsDLQ); len(got) != 0 {
		t.Fatalf("a transient failure went to the dead-letter queue: %v", got)
	}
}

func TestNoteNotifier_dead_letters_the_notes_the_webhook_refuses(t *testing.T) {
	s := newSystem(t)
	s.hook.answer(http.StatusBadRequest, 0)
	handle(t, s.notifier, sqsSample(t, "note-notifier-batch.json")) // dead-lettered, then acknowledged
	if got := testkit.Drain(t, s.sqs, s.notificationsDLQ); len(got) != 2 {
		t.Fatalf("dead-letter queue holds %d messages; want both refused notes", len(got))
	}
	if recs := s.items(t, s.idem, "note-notifier#"); len(recs) != 0 { // records and leases: not the notes of the letters
		t.Fatalf("records = %v; want the leases released, so a redrive notifies again", recs)
	}
}

// Two deliveries of the same batch at once (a redelivery while the first invocation still
// runs): the one that finds the other's live lease fails its messages, it does not skip them.
func TestNoteNotifier_a_live_lease_held_by_another_delivery_is_a_batch_item_failure(t *testing.T) {
	s := newSystem(t)
	s.hook.answer(http.StatusOK, time.Second)
	batch := sqsSample(t, "note-notifier-batch.json")
	first := make(chan events.SQSEventResponse, 1)
	go func() {
		resp, _ := s.notifier.Handle(context.Background(), batch)
		first <- resp
	}()
	for len(s.hook.keys()) < 2 { // both leases are claimed once both calls arrive
		time.Sleep(10 * time.Millisecond)
	}
	second, err := s.notifier.Handle(ctx(t), sqsSample(t, "note-notifier-redelivered.json"))
	if err != nil || len(second.BatchItemFailures) != 2 {
		t.Fatalf("second delivery: failures %v, err %v; want both messages failed, to be redelivered", failures(second), err)
	}
	if resp := <-first; len(resp.BatchItemFailures) != 0 {
		t.Fatalf("first delivery: failures %v; want none", failures(resp))
	}
	if got := s.hook.keys(); len(got) != 2 {
		t.Fatalf("webhook calls = %v; want one per note", got)
	}
	handle(t, s.notifier, sqsSample(t, "note-notifier-redelivered.json")) // later: duplicates
	if got := s.hook.keys(); len(got) != 2 {
		t.Fatalf("webhook calls after the redelivery = %v; want still one per note", got)
	}
}

// With less time left than one webhook call needs, the notifier starts no message: a call cut
// short by Lambda's timeout would return the whole batch instead.
func TestNoteNotifier_starts_no_call_that_cannot_finish_in_the_invocation(t *testing.T) {
	s := newSystem(t)
	batch := sqsSample(t, "note-notifier-batch.json")
	short, cancel := context.WithTimeout(context.Background(), notify.DefaultTimeout+time.Second)
	defer cancel()
	resp, err := s.notifier.Handle(short, batch)
	if err != nil || !slices.Equal(failures(resp), messageIDs(batch)) {
		t.Fatalf("failures %v, err %v; want every message reported failed unstarted", failures(resp), err)
	}
	if keys := s.hook.keys(); len(keys) != 0 {
		t.Errorf("webhook called %d times with too little time left", len(keys))
	}
}
