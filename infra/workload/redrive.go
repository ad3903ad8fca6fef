package workload

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

// redriveStats is what the redrive of the dead-letter queues moved, and why each message had
// been dead-lettered.
type redriveStats struct {
	moved   int
	reasons map[string]int // short reason → messages
}

// redrive moves every message of each consumer's dead-letter queue back to its source queue,
// one at a time in the order the dead-letter queue hands them out (per group, the order they
// were dead-lettered in: a held group comes back in order), under a new deduplication id, as
// an operator's redrive would.
func redrive(ctx context.Context, client *sqs.Client, t *topology) (redriveStats, error) {
	st := redriveStats{reasons: map[string]int{}}
	for _, c := range t.consumers {
		for {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(c.DLQURL),
				MaxNumberOfMessages: 10, VisibilityTimeout: 30, MessageAttributeNames: []string{"All"},
				MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
			if err != nil {
				return st, fmt.Errorf("redrive: receive from %s: %w", c.Queue, err)
			}
			if len(out.Messages) == 0 {
				break
			}
			for _, m := range out.Messages {
				if err := redriveOne(ctx, client, c, m); err != nil {
					return st, err
				}
				st.moved++
				st.reasons[shortReason(m)]++
			}
		}
	}
	// A stream's letters go to its consumer's replay queue, as `onceflow dlq redrive` sends
	// them: one redrive moves what is in view (a key's first letter, its others once it has
	// gone) of the letters there when it began, so it runs again while it says letters are
	// out of view or came in while it ran (late), a few times at most.
	for _, sc := range t.streams {
		for pass, more := 0, true; more && pass < 5; pass++ {
			unseen, late := 0, 0
			var failed []string
			err := dlq.Redrive(ctx, dlq.RedriveConfig{Client: client, Queue: sc.DLQURL, Replay: sc.ReplayURL, Source: sc.ReplayURL}, func(r dlq.Redriven) {
				switch r.Outcome {
				case dlq.Moved:
					st.moved++
					st.reasons[shortReasonOf(r.Letter.Reason)]++
				case dlq.Unseen:
					unseen = r.Count
				case dlq.Late:
					late++
				case dlq.Failed:
					failed = append(failed, fmt.Sprintf("%s: %v", r.Letter.MessageID, r.Err))
				}
			})
			if err == nil && len(failed) > 0 {
				err = fmt.Errorf("%d letters not moved: %s", len(failed), strings.Join(failed, "; "))
			}
			if err != nil {
				return st, fmt.Errorf("redrive %s's letters to its replay queue: %w", sc.Name, err)
			}
			if more = unseen > 0 || late > 0; more {
				if err := pause(ctx, 2*time.Second); err != nil { // the replay queue takes the first ones
					return st, err
				}
			}
		}
	}
	return st, nil
}

func redriveOne(ctx context.Context, client *sqs.Client, c consumer, m sqstypes.Message) error {
	group := m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)]
	_, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(c.QueueURL), MessageBody: m.Body,
		MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String("redrive-" + aws.ToString(m.MessageId))})
	if err != nil {
		return fmt.Errorf("redrive %s to %s: %w", aws.ToString(m.MessageId), c.Queue, err)
	}
	_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(c.DLQURL), ReceiptHandle: m.ReceiptHandle})
	if err != nil {
		return fmt.Errorf("redrive: delete %s from the dead-letter queue of %s: %w", aws.ToString(m.MessageId), c.Queue, err)
	}
	return nil
}

// shortReason is why m was dead-lettered, in a few words: its reason attribute up to the
// first colon, or the queue's redrive policy when it carries none.
func shortReason(m sqstypes.Message) string {
	return shortReasonOf(aws.ToString(m.MessageAttributes[deadletter.AttrReason].StringValue))
}

// shortReasonOf is a letter's reason up to its first colon, at most 60 bytes.
func shortReasonOf(r string) string {
	if r == "" {
		return "maxReceiveCount reached (no reason attribute)"
	}
	if i := strings.Index(r, ":"); i > 0 {
		r = r[:i]
	}
	if len(r) > 60 {
		r = r[:60]
	}
	return r
}

// settle waits until every consumer queue is empty, three looks in a row a second apart, or
// until timeout: what is left then is in the dead-letter queues (or stuck, which the
// invariants report).
func (r *run) settle(ctx context.Context, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	calm := 0
	for calm < 3 && time.Now().Before(deadline) {
		empty := true
		for _, u := range r.t.sourceQueues() {
			if d, err := queueDepth(ctx, r.sqs, u); err != nil || d.total() > 0 {
				empty = false
			}
		}
		if empty {
			calm++
		} else {
			calm = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}
