package dynamodbbatch_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
)

func TestEventOf_converts_stream_records_as_Lambda_delivers_them(t *testing.T) {
	at := time.Unix(1700000000, 0)
	ev, err := dynamodbbatch.EventOf([]streamtypes.Record{{
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
	}}, "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ev)
	want := `{"Records":[{"awsRegion":"us-east-1","dynamodb":{"ApproximateCreationDateTime":1700000000,"Keys":{"pk":{"S":"k"}},` +
		`"NewImage":{"m":{"M":{"l":{"L":[{"BOOL":true}]}}},"n":{"N":"3"},"pk":{"S":"k"},"ss":{"SS":["a","b"]}},` +
		`"SequenceNumber":"100","SizeBytes":12,"StreamViewType":"NEW_IMAGE"},"eventID":"e1","eventName":"INSERT",` +
		`"eventSource":"aws:dynamodb","eventVersion":"1.1","eventSourceARN":"arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/1"}]}`
	if string(b) != want {
		t.Errorf("event =\n%s\nwant\n%s", b, want)
	}
}
