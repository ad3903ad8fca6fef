package claimcheck_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/idempotency"
)

func sized(n string) map[string]events.SQSMessageAttribute {
	return map[string]events.SQSMessageAttribute{claimcheck.SizeAttribute: {DataType: "Number", StringValue: aws.String(n)}}
}

func TestPointer_Body_is_the_extended_client_format(t *testing.T) {
	got := claimcheck.Pointer{Bucket: "payloads", Key: "k-1"}.Body()
	want := `["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"payloads","s3Key":"k-1"}]`
	if got != want {
		t.Fatalf("Body() = %s\nwant      %s", got, want)
	}
}

func TestParse_reads_the_pointers_the_extended_clients_write(t *testing.T) {
	legacy := map[string]events.SQSMessageAttribute{claimcheck.LegacySizeAttribute: {DataType: "Number", StringValue: aws.String("7")}}
	want := claimcheck.Pointer{Bucket: "b", Key: "c71eb2ae-37e0-4265-8909-32f4153faddf"}
	cases := []struct {
		name  string
		msg   events.SQSMessage
		ok    bool
		size  int64
		perma bool // a permanent error
	}{
		{"Java (no spaces)", events.SQSMessage{MessageAttributes: sized("3145728"),
			Body: `["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"b","s3Key":"c71eb2ae-37e0-4265-8909-32f4153faddf"}]`}, true, 3145728, false},
		{"Python (json.dumps spacing)", events.SQSMessage{MessageAttributes: sized("12"),
			Body: `["software.amazon.payloadoffloading.PayloadS3Pointer", {"s3BucketName": "b", "s3Key": "c71eb2ae-37e0-4265-8909-32f4153faddf"}]`}, true, 12, false},
		{"legacy class and attribute", events.SQSMessage{MessageAttributes: legacy,
			Body: `["com.amazon.sqs.javamessaging.MessageS3Pointer",{"s3BucketName":"b","s3Key":"c71eb2ae-37e0-4265-8909-32f4153faddf"}]`}, true, 7, false},
		{"a pointer that lost its attribute (a redriven dead letter)", events.SQSMessage{
			Body: `["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"b","s3Key":"c71eb2ae-37e0-4265-8909-32f4153faddf"}]`}, true, 0, false},
		{"a CloudEvent is no pointer", events.SQSMessage{Body: `{"specversion":"1.0","id":"x"}`}, false, 0, false},
		{"a JSON array of other things is no pointer", events.SQSMessage{Body: `["a",{"s3BucketName":"b"}]`}, false, 0, false},
		{"marked, but the body is no pointer", events.SQSMessage{MessageAttributes: sized("10"), Body: `{"id":"x"}`}, true, 0, true},
		{"marked, without a key", events.SQSMessage{MessageAttributes: sized("10"),
			Body: `["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"b"}]`}, true, 0, true},
		{"a size that is no number", events.SQSMessage{MessageAttributes: sized("big"),
			Body: `["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"b","s3Key":"k"}]`}, true, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, size, ok, err := claimcheck.Parse(tc.msg)
			if ok != tc.ok || (err != nil) != tc.perma || tc.perma && !idempotency.IsPermanent(err) {
				t.Fatalf("Parse = ok %v, err %v; want ok %v, permanent error %v", ok, err, tc.ok, tc.perma)
			}
			var malformed *claimcheck.MalformedPointerError
			if tc.perma && !errors.As(err, &malformed) {
				t.Fatalf("error %T; want a MalformedPointerError", err)
			}
			if tc.ok && !tc.perma && (p != want || size != tc.size) {
				t.Fatalf("Parse = %+v size %d; want %+v size %d", p, size, want, tc.size)
			}
		})
	}
}
