package dlq

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/deadletter"
)

// DeleteAPI is the SQS call that deletes a letter; *sqs.Client implements it.
type DeleteAPI interface {
	DeleteMessage(ctx context.Context, params *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// Take finds, among the letters in view, the one id names (Named), and keeps it out of
// everyone's view for Hold (the others are made visible again), so that what an operator is
// shown stays what is there: the caller then deletes it (Delete) or lets it go (Release). ok
// is false when no letter in view matches (on a FIFO queue, a letter behind its group's first
// one is not in view).
func Take(ctx context.Context, client ReceiveAPI, queueURL, id string) (l deadletter.Letter, ok bool, err error) {
	return TakeWhere(ctx, client, queueURL, Named(id))
}

// Named selects the letter that id names, by any id the tools print for it: its own message
// id in the dead-letter queue, its source message id, the id it was first sent as (the one its
// producer was told and its group's held list knows it by; a stream letter's record id, which
// a replay's letter keeps) or its event id.
func Named(id string) func(deadletter.Letter) bool {
	return func(l deadletter.Letter) bool {
		return id != "" && (l.MessageID == id || l.SourceMessage == id || l.OriginalMessage == id || l.EventID == id)
	}
}

// TakeWhere is Take of the first letter in view that match selects.
func TakeWhere(ctx context.Context, client ReceiveAPI, queueURL string, match func(deadletter.Letter) bool) (l deadletter.Letter, ok bool, err error) {
	var others []deadletter.Letter
	defer func() { release(context.WithoutCancel(ctx), client, queueURL, others) }()
	for {
		batch, err := receive(ctx, client, queueURL, VisibilityHold)
		if err != nil || len(batch) == 0 {
			return deadletter.Letter{}, false, err
		}
		for _, b := range batch {
			if !ok && match(b) {
				l, ok = b, true
				continue
			}
			others = append(others, b)
		}
		if ok {
			return l, true, nil
		}
	}
}

// Delete deletes a letter received by Take (or Browse, while it holds it).
func Delete(ctx context.Context, client DeleteAPI, queueURL string, l deadletter.Letter) error {
	if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String(l.ReceiptHandle)}); err != nil {
		return fmt.Errorf("delete letter %s: %w", l.MessageID, err)
	}
	return nil
}

// Release makes a letter received by Take visible again at once.
func Release(ctx context.Context, client ReceiveAPI, queueURL string, l deadletter.Letter) {
	release(ctx, client, queueURL, []deadletter.Letter{l})
}
