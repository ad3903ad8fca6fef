package localcloud

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

func TestRoute_match_binds_path_parameters(t *testing.T) {
	get := newRoute("F", Event{Path: "/notes/{id}", Method: "GET"})
	proxy := newRoute("F", Event{Path: "/files/{proxy+}", Method: "ANY"})
	cases := []struct {
		r            route
		method, path string
		ok           bool
		param        string
	}{
		{get, "GET", "/notes/n1", true, "n1"},
		{get, "POST", "/notes/n1", false, ""},
		{get, "GET", "/notes", false, ""},
		{get, "GET", "/notes/n1/x", false, ""},
		{proxy, "PUT", "/files/a/b", true, "a/b"},
	}
	for _, c := range cases {
		params, ok := c.r.match(c.method, c.path)
		if ok != c.ok || (ok && params["id"]+params["proxy"] != c.param) {
			t.Errorf("%s %s on %s = %v %v, want %v %q", c.method, c.path, c.r.key, params, ok, c.ok, c.param)
		}
	}
}

func TestDynamoDBEvent_converts_stream_records(t *testing.T) {
	at := time.Unix(1700000000, 0)
	ev, err := DynamoDBEvent([]streamtypes.Record{{
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
	ev := SQSEvent([]sqstypes.Message{{MessageId: aws.String("m"), ReceiptHandle: aws.String("r"), Body: aws.String("b"),
		MD5OfBody: aws.String("md5"), Attributes: map[string]string{"MessageGroupId": "g", "SequenceNumber": "1"},
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}}},
		"arn:q")
	r := ev.Records[0]
	if r.MessageId != "m" || r.ReceiptHandle != "r" || r.Md5OfBody != "md5" || r.Attributes["MessageGroupId"] != "g" ||
		r.EventSource != "aws:sqs" || r.EventSourceARN != "arn:q" || r.AWSRegion != Region ||
		aws.ToString(r.MessageAttributes["k"].StringValue) != "v" || r.MessageAttributes["k"].DataType != "String" {
		t.Errorf("record = %+v", r)
	}
}

func TestFunctionError_recognises_failed_invocations(t *testing.T) {
	cases := []struct {
		header, payload string
		failed          bool
	}{
		{"", `{"batchItemFailures":[]}`, false},
		{"", `Task timed out after 3.00 seconds`, true},
		{"", `{"errorMessage":"boom","errorType":"errorString"}`, true},
		{"Unhandled", `{}`, true},
		{"", `{"statusCode":200,"body":"errorType"}`, false},
	}
	for _, c := range cases {
		if got := functionError("F", c.header, []byte(c.payload)) != nil; got != c.failed {
			t.Errorf("functionError(%q, %s) failed = %v, want %v", c.header, c.payload, got, c.failed)
		}
	}
}
