package dlq

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/deadletter"
)

// Filter selects letters; its zero value selects every one.
type Filter struct {
	Reason    string // a letter whose Why contains this text (case-insensitive)
	EventType string // a letter whose event type is this
	Group     string // a letter of this message group (a FIFO queue's group id: an account)
}

// Match reports whether f selects l.
func (f Filter) Match(l deadletter.Letter) bool {
	if f.Reason != "" && !strings.Contains(strings.ToLower(l.Why()), strings.ToLower(f.Reason)) {
		return false
	}
	if f.Group != "" && l.GroupID != f.Group {
		return false
	}
	return f.EventType == "" || l.EventType == f.EventType
}

// ReceiveAPI is the SQS calls that reading a dead-letter queue makes; *sqs.Client implements it.
type ReceiveAPI interface {
	ReceiveMessage(ctx context.Context, params *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	ChangeMessageVisibility(ctx context.Context, params *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// VisibilityHold is how long Browse keeps the letters it has seen invisible to others: until it returns,
// when it makes them visible again.
const VisibilityHold = 5 * time.Minute

// Browse receives the letters of the dead-letter queue at queueURL in the queue's order and
// calls fn with each until fn returns false or the queue has no more to hand out; then it
// makes every letter it received visible again, so nothing leaves the queue. On a FIFO queue
// SQS hands out no later message of a group while an earlier one is received, so Browse sees
// the first letters of each group (up to ten per receive on AWS; the first only on some
// emulators); ApproximateNumberOfMessages tells how many there are.
func Browse(ctx context.Context, client ReceiveAPI, queueURL string, fn func(deadletter.Letter) bool) error {
	var seen []deadletter.Letter
	defer func() { release(context.WithoutCancel(ctx), client, queueURL, seen) }()
	for {
		batch, err := receive(ctx, client, queueURL, VisibilityHold)
		if err != nil || len(batch) == 0 {
			return err
		}
		seen = append(seen, batch...) // the whole batch: stopping early must release it all
		for _, l := range batch {
			if !fn(l) {
				return nil
			}
		}
	}
}

// receive returns the next letters the queue hands out, holding them for hold.
func receive(ctx context.Context, client ReceiveAPI, queueURL string, hold time.Duration) ([]deadletter.Letter, error) {
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10, VisibilityTimeout: int32(max(hold/time.Second, 1)),
		WaitTimeSeconds:             1, // a long poll asks every server: an empty answer means empty
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", queueURL, err)
	}
	letters := make([]deadletter.Letter, len(out.Messages))
	for i, m := range out.Messages {
		letters[i] = deadletter.Read(m)
	}
	return letters, nil
}

// release makes the letters visible again at once.
func release(ctx context.Context, client ReceiveAPI, queueURL string, letters []deadletter.Letter) {
	for _, l := range letters {
		_, _ = client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
			QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String(l.ReceiptHandle), VisibilityTimeout: 0})
	}
}
