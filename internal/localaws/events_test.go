package localaws_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/internal/localaws"
)

func TestDynamoDBEvent_converts_stream_records(t *testing.T) {
	at := time.Unix(1700000000, 0)
	ev, err := localaws.DynamoDBEvent([]streamtypes.Record{{
		EventID: aws.String("e1"), EventName: streamtypes.OperationTypeInsert, EventVersion: aws.String("1.1"),
		Dynamodb: &streamtypes.StreamRecord{
			ApproximateCreationDateTime: &at, SequenceNumber: aws.String("100"), SizeBytes: aws.Int64(12),
			StreamViewType: streamtypes.StreamViewTypeNewImage,
			Keys:           map[string]streamtypes.AttributeValue{"pk": &streamtypes.AttributeValueMemberS{Value: "k"}},
			NewImage: map[string]streamtypes.AttributeValue{
				"pk": &streamtypes.AttributeValueMemberS{Value: "k"},
				"n":  &streamtypes.AttributeValueMemberN{Value: "3"},
				"m": &streamtypes.AttributeValueMemberM{Value: map[string]streamtypes.AttributeValue{
					"l": &streamtypes.AttributeValueMemberL{Value: []streamtypes.AttributeValue{&streamtypes.AttributeValueMemberBOOL{Value: true}}}}},
				"ss": &streamtypes.AttributeValueMemberSS{Value: []string{"a", "b"}},
			},
		},
	}}, "arn:stream")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ev)
	want := `{"Records":[{"awsRegion":"us-east-1","dynamodb":{"ApproximateCreationDateTime":1700000000,"Keys":{"pk":{"S":"k"}},` +
		`"NewImage":{"m":{"M":{"l":{"L":[{"BOOL":true}]}}},"n":{"N":"3"},"pk":{"S":"k"},"ss":{"SS":["a","b"]}},` +
		`"SequenceNumber":"100","SizeBytes":12,"StreamViewType":"NEW_IMAGE"},"eventID":"e1","eventName":"INSERT",` +
		`"eventSource":"aws:dynamodb","eventVersion":"1.1","eventSourceARN":"arn:stream"}]}`
	if string(b) != want {
		t.Errorf("event =\n%s\nwant\n%s", b, want)
	}
}

func TestSQSEvent_carries_system_attributes(t *testing.T) {
	ev := localaws.SQSEvent([]sqstypes.Message{{MessageId: aws.String("m"), ReceiptHandle: aws.String("r"), Body: aws.String("b"),
		MD5OfBody: aws.String("md5"), Attributes: map[string]string{"MessageGroupId": "g", "SequenceNumber": "1"},
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}}},
		"arn:q")
	r := ev.Records[0]
	if r.MessageId != "m" || r.ReceiptHandle != "r" || r.Md5OfBody != "md5" || r.Attributes["MessageGroupId"] != "g" ||
		r.EventSource != "aws:sqs" || r.EventSourceARN != "arn:q" || r.AWSRegion != localaws.Region ||
		aws.ToString(r.MessageAttributes["k"].StringValue) != "v" || r.MessageAttributes["k"].DataType != "String" {
		t.Errorf("record = %+v", r)
	}
}
