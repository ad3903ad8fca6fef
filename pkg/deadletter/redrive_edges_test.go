package deadletter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

// A dry run on a FIFO queue sees only the first letters of each group: the letters behind
// them are reported as unseen, never left out of the count ("would move 2" with 3 letters).
func TestRedrive_dry_run_counts_the_letters_it_cannot_see(t *testing.T) {
	t.Parallel()
	c := client(t)
	src, dlqURL := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
	q := deadletter.New(c, dlqURL)
	for _, id := range []string{"e1", "e2", "e3"} {
		if err := q.DeadLetter(t.Context(), deadLettered(queueARN(t, c, src), "g", id, "t"), errors.New("bad")); err != nil {
			t.Fatal(err)
		}
	}
	counts := map[dlq.Outcome]int{}
	if err := dlq.Redrive(t.Context(), dlq.RedriveConfig{Client: c, Queue: dlqURL, DryRun: true}, func(r dlq.Redriven) {
		if r.Outcome == dlq.Unseen {
			counts[r.Outcome] += r.Count
			return
		}
		counts[r.Outcome]++
	}); err != nil {
		t.Fatal(err)
	}
	if counts[dlq.WouldMove]+counts[dlq.Unseen] != 3 || counts[dlq.WouldMove] == 0 {
		t.Errorf("dry run: %v; want the 3 letters as would move or unseen", counts)
	}
	if left := receiveAll(t, c, dlqURL); len(left) != 3 {
		t.Errorf("dead-letter queue holds %d letters after a dry run; want 3", len(left))
	}
}

// A letter whose send fails stops its group: the letters behind it stay, in order; other
// groups go on.
func TestRedrive_stops_a_group_at_its_first_letter_it_could_not_send(t *testing.T) {
	t.Parallel()
	c := client(t)
	src, dlqURL := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
	arn := queueARN(t, c, src)
	q := deadletter.New(c, dlqURL)
	for _, l := range []struct{ arn, group, id string }{
		{"arn:aws:sqs:us-east-1:000000000000:gone.fifo", "g1", "a1"}, // its queue does not exist
		{arn, "g1", "a2"},
		{arn, "g2", "b1"},
	} {
		if err := q.DeadLetter(t.Context(), deadLettered(l.arn, l.group, l.id, "t"), errors.New("bad")); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL})
	if outcomes["a1"] != dlq.Failed || outcomes["b1"] != dlq.Moved {
		t.Errorf("outcomes %v; want a1 failed, b1 moved", outcomes)
	}
	if o, seen := outcomes["a2"]; seen && o != dlq.Behind {
		t.Errorf("a2: %s; want it left behind a1", o)
	}
	if got := receiveAll(t, c, src); len(got) != 1 || bodyID(got[0]) != "b1" {
		t.Errorf("source queue got %d messages; want b1 only", len(got))
	}
	if left := receiveAll(t, c, dlqURL); len(left) != 2 {
		t.Errorf("dead-letter queue holds %d letters; want a1 and a2", len(left))
	}
}

// A redrive that outlasts the visibility timeout of the letters it received does not receive
// the letters it left in place as new ones: each is decided once, and left visible at the end.
func TestRedrive_outlasting_the_visibility_timeout_decides_each_letter_once(t *testing.T) {
	t.Parallel()
	c := client(t)
	src, dlqURL := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
	arn := queueARN(t, c, src)
	q := deadletter.New(c, dlqURL)
	for _, l := range []struct{ group, id, typ string }{{"g1", "x", "keep"}, {"g2", "y", "t"}, {"g3", "z", "t"}} {
		if err := q.DeadLetter(t.Context(), deadLettered(arn, l.group, l.id, l.typ), errors.New("bad")); err != nil {
			t.Fatal(err)
		}
	}
	decided := map[string]int{}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // without the fix it never ends
	defer cancel()
	err := dlq.Redrive(ctx, dlq.RedriveConfig{Client: c, Queue: dlqURL, Filter: dlq.Filter{EventType: "t"},
		Visibility: time.Second}, func(r dlq.Redriven) {
		decided[r.Letter.EventID]++
		if r.Outcome == dlq.Moved && decided["slept"] == 0 {
			decided["slept"]++
			time.Sleep(2500 * time.Millisecond) // x, left in place, is visible again
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if decided["x"] != 1 || decided["y"] != 1 || decided["z"] != 1 {
		t.Errorf("decided %v; want x, y and z once each", decided)
	}
	if left := receiveAll(t, c, dlqURL); len(left) != 1 || bodyID(left[0]) != "x" {
		t.Errorf("dead-letter queue holds %d letters; want x", len(left))
	}
}
