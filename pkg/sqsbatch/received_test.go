package sqsbatch_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

func TestEventOf_carries_system_and_message_attributes(t *testing.T) {
	ev := sqsbatch.EventOf([]sqstypes.Message{{MessageId: aws.String("m"), ReceiptHandle: aws.String("r"), Body: aws.String("b"),
		MD5OfBody: aws.String("md5"), Attributes: map[string]string{"MessageGroupId": "g", "SequenceNumber": "1"},
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}}},
		"arn:aws:sqs:eu-west-1:000000000000:q.fifo")
	r := ev.Records[0]
	if r.MessageId != "m" || r.ReceiptHandle != "r" || r.Md5OfBody != "md5" || r.Attributes["MessageGroupId"] != "g" ||
		r.EventSource != "aws:sqs" || r.EventSourceARN != "arn:aws:sqs:eu-west-1:000000000000:q.fifo" || r.AWSRegion != "eu-west-1" ||
		aws.ToString(r.MessageAttributes["k"].StringValue) != "v" || r.MessageAttributes["k"].DataType != "String" {
		t.Errorf("record = %+v", r)
	}
}
