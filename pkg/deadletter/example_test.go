package deadletter_test

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/deadletter"
)

// printingSQS stands for *sqs.Client: it prints what would be sent.
type printingSQS struct{}

func (printingSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	fmt.Println("group", aws.ToString(in.MessageGroupId), "dedup", aws.ToString(in.MessageDeduplicationId))
	for _, name := range []string{deadletter.AttrReason, deadletter.AttrSourceMessageID, deadletter.AttrSourceQueueARN} {
		fmt.Printf("%s: %s\n", name, aws.ToString(in.MessageAttributes[name].StringValue))
	}
	names := make([]string, 0, len(in.MessageAttributes))
	for name := range in.MessageAttributes {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Println(names)
	return &sqs.SendMessageOutput{}, nil
}

// A message that can never succeed goes to the dead-letter queue with its body unchanged, its
// group kept, and the reason and its origin as message attributes. In a Lambda function it is
// the sqsbatch.Config's DeadLetter.
func ExampleQueue_DeadLetter() {
	q := deadletter.New(printingSQS{}, "https://sqs.eu-west-1.amazonaws.com/123456789012/orders-dlq.fifo")
	msg := events.SQSMessage{MessageId: "m-1", Body: `{"not":"an event"}`,
		EventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:orders.fifo",
		Attributes:     map[string]string{"MessageGroupId": "o-1", "ApproximateReceiveCount": "1"}}
	_ = q.DeadLetter(context.Background(), msg, errors.New("malformed message: id: missing"))
	// Output:
	// group o-1 dedup m-1
	// reason: malformed message: id: missing
	// sourceMessageId: m-1
	// sourceQueueArn: arn:aws:sqs:eu-west-1:123456789012:orders.fifo
	// [deadLetteredAt reason receiveCount sourceGroupId sourceMessageId sourceQueueArn]
}
