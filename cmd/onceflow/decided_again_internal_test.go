package main

import (
	"strings"
	"testing"
)

// An event the consumer has decided (discarded by an operator, or applied) comes back: a
// producer's re-send after SQS's five-minute window, an outbox republish. It must be answered
// from its record, whatever its handler would now say of it (it fails, or a later deploy
// refuses its data): acknowledged, never dead-lettered again, never holding its account. A
// letter it left would be one dlq discard refuses for good ("applied or decided already"),
// its alarm on forever.
func TestRecovery_a_decided_event_delivered_again_is_answered_and_leaves_no_letter_or_hold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		decide func(t *testing.T, f *pipeline) // decides x, then makes its handler refuse it
		want   []string                        // applied at the end
	}{
		{"discarded, then sent again while its handler still fails", func(t *testing.T, f *pipeline) {
			f.set(f.failing, true, "x")
			f.sendNew(t, "acct", "x")
			f.consume(t)
			if code, out := f.cli(t, "dlq", "discard", "--why", "downstream gone for good", "x"); code != 0 || !strings.Contains(out, "deleted letter") {
				t.Fatalf("dlq discard: exit %d; want x recorded as discarded and its letter deleted", code)
			}
		}, []string{"e2"}},
		{"applied, then sent again after a deploy that refuses its data", func(t *testing.T, f *pipeline) {
			f.sendNew(t, "acct", "x")
			f.consume(t)
			f.set(f.malformed, true, "x")
		}, []string{"x", "e2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			f := c.pipeline(t, pipelineConfig{})
			tt.decide(t, f)
			f.wantFree(t, "acct", "once x was decided,")

			f.send(t, "acct", "x", "x-sent-again", map[string]int{"amount": 5}) // after the five-minute window
			f.sendNew(t, "acct", "e2")
			f.consume(t)

			f.wantSettled(t, "acct", "after x came back,", tt.want...)
			f.wantDiscardable(t, "x")
		})
	}
}
