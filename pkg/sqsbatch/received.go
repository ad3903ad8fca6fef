package sqsbatch

import (
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/arn"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// EventOf is the event Lambda's SQS event source mapping sends for msgs, received from the
// queue queueARN with their system and message attributes: for a Processor driven by a
// ReceiveMessage loop of your own (a container, a test) rather than by Lambda.
func EventOf(msgs []sqstypes.Message, queueARN string) events.SQSEvent {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(msgs))}
	source, _ := arn.Parse(queueARN) // its region is the records'
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
			AWSRegion:              source.Region,
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
