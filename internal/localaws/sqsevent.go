package localaws

import (
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQSEvent builds the event Lambda's SQS event source mapping sends for messages received
// from the queue queueARN (with their system and message attributes).
func SQSEvent(msgs []sqstypes.Message, queueARN string) events.SQSEvent {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(msgs))}
	for _, m := range msgs {
		rec := events.SQSMessage{
			MessageId:              aws.ToString(m.MessageId),
			ReceiptHandle:          aws.ToString(m.ReceiptHandle),
			Body:                   aws.ToString(m.Body),
			Md5OfBody:              aws.ToString(m.MD5OfBody),
			Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
			Attributes:             m.Attributes,
			MessageAttributes:      map[string]events.SQSMessageAttribute{},
			EventSourceARN:         queueARN,
			EventSource:            "aws:sqs",
			AWSRegion:              Region,
		}
		if rec.Attributes == nil {
			rec.Attributes = map[string]string{}
		}
		for k, a := range m.MessageAttributes {
			rec.MessageAttributes[k] = events.SQSMessageAttribute{
				StringValue:      a.StringValue,
				BinaryValue:      a.BinaryValue,
				StringListValues: a.StringListValues,
				BinaryListValues: a.BinaryListValues,
				DataType:         aws.ToString(a.DataType),
			}
		}
		ev.Records = append(ev.Records, rec)
	}
	return ev
}
