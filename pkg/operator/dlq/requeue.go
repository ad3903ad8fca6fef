package dlq

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/deadletter"
)

// RequeueAPI is the SQS calls Requeue makes; *sqs.Client implements it.
type RequeueAPI interface {
	deadletter.SendMessageAPI
	DeleteAPI
}

// Requeue moves letter l, received from the dead-letter queue at queueURL by Take (or
// TakeWhere), to the end of that queue: it sends l again with all it carries (its body, its
// attributes, its trace header, its group) under a fresh deduplication id, then deletes it, so
// that on a FIFO queue it comes after every other letter of its group, and a redrive sends them
// first. A letter SQS moved by itself gains the attributes that name its source message, its
// receive count and when it was moved, which its new message id and timestamp would lose
// (deadletter.Letter.RequeueInput). The delete acts on l as it was received only (its receipt
// handle); should it fail, the letter is in the queue twice, and a redrive of the second is
// answered as a duplicate. It returns the message id the letter has now.
func Requeue(ctx context.Context, client RequeueAPI, queueURL string, l deadletter.Letter) (string, error) {
	in, err := l.RequeueInput(queueURL)
	if err != nil {
		return "", fmt.Errorf("requeue letter %s: %w", l.MessageID, err)
	}
	out, err := client.SendMessage(ctx, in)
	if err != nil {
		return "", fmt.Errorf("requeue letter %s: %w", l.MessageID, err)
	}
	if err := Delete(ctx, client, queueURL, l); err != nil {
		return aws.ToString(out.MessageId), fmt.Errorf("requeued letter %s as %s, but it is still there too: %w", l.MessageID, aws.ToString(out.MessageId), err)
	}
	return aws.ToString(out.MessageId), nil
}
