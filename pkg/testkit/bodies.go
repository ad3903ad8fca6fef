package testkit

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"
)

// published counts the bodies built, so that each one has its own transport id.
var published atomic.Int64

// EventBridge returns the body EventBridge delivers to a queue for a PutEvents of detail (any
// value encoding to a JSON object): its id and time are new on every call, as they are on every
// PutEvents, so two calls with one detail are a producer's retry (a duplicate only if the
// consumer keys on the detail: envelope.EventBridge.Key).
func EventBridge(source, detailType string, detail any) string {
	d, err := json.Marshal(detail)
	if err != nil {
		panic(fmt.Sprintf("testkit.EventBridge: detail: %v", err))
	}
	b, _ := json.Marshal(map[string]any{
		"version": "0", "id": newID(), "detail-type": detailType, "source": source,
		"account": "000000000000", "time": time.Now().UTC().Format(time.RFC3339), "region": "us-east-1",
		"resources": []string{}, "detail": json.RawMessage(d),
	})
	return string(b)
}

// SNS returns the body an SNS topic delivers to a queue for a Publish of message, with raw
// message delivery off (raw delivery delivers message itself): SNS's notification envelope,
// whose MessageId and Timestamp are new on every call, as on every Publish.
func SNS(topicARN, message string) string {
	b, _ := json.Marshal(map[string]any{
		"Type": "Notification", "MessageId": newID(), "TopicArn": topicARN, "Message": message,
		"Timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "SignatureVersion": "1",
		"Signature": "EXAMPLE", "SigningCertURL": "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-EXAMPLE.pem",
		"UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe",
	})
	return string(b)
}

// S3 returns the body of an S3 event notification (eventName such as "ObjectCreated:Put") for
// the object key of bucket, of size bytes, as S3 delivers it to a queue: one record, with the
// object's sequencer, which grows with every call, and a new request id.
func S3(bucket, key, eventName string, size int64) string {
	n := published.Add(1)
	b, _ := json.Marshal(map[string]any{"Records": []any{map[string]any{
		"eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": "us-east-1",
		"eventTime": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "eventName": eventName,
		"userIdentity":      map[string]string{"principalId": "AWS:EXAMPLE"},
		"requestParameters": map[string]string{"sourceIPAddress": "127.0.0.1"},
		"responseElements":  map[string]string{"x-amz-request-id": fmt.Sprintf("REQ%013d", n), "x-amz-id-2": "EXAMPLE"},
		"s3": map[string]any{
			"s3SchemaVersion": "1.0", "configurationId": "testkit",
			"bucket": map[string]any{"name": bucket, "ownerIdentity": map[string]string{"principalId": "EXAMPLE"}, "arn": "arn:aws:s3:::" + bucket},
			"object": map[string]any{"key": key, "size": size, "eTag": fmt.Sprintf("%032x", n), "sequencer": fmt.Sprintf("%018X", n)},
		},
	}}})
	return string(b)
}

// newID is a random version 4 UUID, as AWS writes a notification's id.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
