package main

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Found by the recovery model (docs/recovery-model.md, scenarios 10 and 6): a message whose
// discard no event record can answer (u, a body that is not an event; c, a conflict: its event
// id's record is another payload's) is held and dead-lettered, but the answer of that invocation
// is lost, so SQS delivers it again. The operator discards its letter before then, as the
// runbook says. The redelivery holds the account behind it once more, and its letter is the
// first one's repeat, which SQS drops within five minutes (deduplicated on the message id):
// were nothing to remember the discard of that message, the account would be held behind a
// message no letter shows. The discard must be final for it too: its redelivery is answered,
// the account goes on.
func TestRecovery_a_discarded_message_delivered_again_leaves_its_group_free(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, lose, discard string
		applied             []string
		send                func(t *testing.T, f *pipeline) string // sends the message, returns its id
	}{
		{"not an event", "", "", []string{"e2"}, func(t *testing.T, f *pipeline) string {
			out, err := f.c.sqs.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: aws.String(f.src), MessageBody: aws.String("not an event"),
				MessageGroupId: aws.String("acct"), MessageDeduplicationId: aws.String("u")})
			if err != nil {
				t.Fatal(err)
			}
			return aws.ToString(out.MessageId)
		}},
		{"a conflict", "a1", "a1", []string{"a1", "e2"}, func(t *testing.T, f *pipeline) string {
			f.sendNew(t, "acct", "a1")
			f.consume(t)
			f.send(t, "acct", "a1", "c", map[string]int{"amount": 7}) // a1's id reused with another payload
			return ""
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newCloud(t)
			f := c.pipeline(t, pipelineConfig{})
			id := tt.send(t, f)
			f.loseAnswers(tt.lose, 1)
			if !f.step(t) || f.letters(t) != 1 {
				t.Fatalf("its first delivery: %d letters; want it dead-lettered", f.letters(t))
			}
			if tt.discard != "" {
				id = tt.discard
			}
			if code, out := f.cli(t, "dlq", "discard", "--why", "cannot be applied", id); code != 0 {
				t.Fatalf("dlq discard of its letter: exit %d: %s", code, lastLines(out, 2))
			}
			f.consume(t) // delivered again
			f.sendNew(t, "acct", "e2")
			f.consume(t)

			f.wantSettled(t, "acct", "after its discard and its redelivery,", tt.applied...)
		})
	}
}
