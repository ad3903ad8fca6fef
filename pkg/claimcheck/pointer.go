package claimcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// The names the SQS extended client libraries use, current and legacy: a receiver of any of
// them reads the message as a pointer.
const (
	// PointerClass is the first element of a pointer body, the Java class it was written as.
	PointerClass = "software.amazon.payloadoffloading.PayloadS3Pointer"
	// LegacyPointerClass is the class earlier versions of the libraries wrote.
	LegacyPointerClass = "com.amazon.sqs.javamessaging.MessageS3Pointer"
	// SizeAttribute is the Number message attribute holding the payload's size in bytes.
	SizeAttribute = "ExtendedPayloadSize"
	// LegacySizeAttribute is the size attribute of the legacy format.
	LegacySizeAttribute = "SQSLargePayloadSize"
)

// Pointer names the S3 object that holds a message's payload.
type Pointer struct {
	Bucket string `json:"s3BucketName"`
	Key    string `json:"s3Key"`
}

// String is the object's S3 URI, s3://bucket/key.
func (p Pointer) String() string { return "s3://" + p.Bucket + "/" + p.Key }

// Body is the message body of the pointer, as the extended client libraries write it:
// ["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"…","s3Key":"…"}].
func (p Pointer) Body() string {
	b, _ := json.Marshal([]any{PointerClass, p}) // strings only: never fails
	return string(b)
}

// SizeAttributeValue is the ExtendedPayloadSize value for a payload of n bytes.
func SizeAttributeValue(n int) string { return strconv.Itoa(n) }

// Parse returns the pointer msg carries, with ok false for a message that is not one. A
// message is a pointer when it has the size attribute (current or legacy), as the libraries
// decide, or when its body starts as a pointer does: a dead letter redriven without its
// attributes stays readable. It also returns the size the attribute declares, 0 without one.
func Parse(msg events.SQSMessage) (p Pointer, size int64, ok bool, err error) {
	attr, marked := msg.MessageAttributes[SizeAttribute]
	if !marked {
		attr, marked = msg.MessageAttributes[LegacySizeAttribute]
	}
	if !marked && !looksLikePointer(msg.Body) {
		return Pointer{}, 0, false, nil
	}
	if marked && attr.StringValue != nil {
		if size, err = strconv.ParseInt(strings.TrimSpace(*attr.StringValue), 10, 64); err != nil || size < 0 {
			return Pointer{}, 0, true, &MalformedPointerError{Reason: fmt.Sprintf("size attribute %q", *attr.StringValue)}
		}
	}
	p, err = parseBody(msg.Body)
	return p, size, true, err
}

func looksLikePointer(body string) bool {
	b := strings.TrimLeft(body, " \t\r\n")
	if !strings.HasPrefix(b, "[") {
		return false
	}
	b = strings.TrimLeft(b[1:], " \t\r\n")
	return strings.HasPrefix(b, `"`+PointerClass+`"`) || strings.HasPrefix(b, `"`+LegacyPointerClass+`"`)
}

// parseBody reads a pointer body: a JSON array of the class and the object's bucket and key,
// in any spacing (Java writes none, Python a space after each separator).
func parseBody(body string) (Pointer, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal([]byte(body), &parts); err != nil || len(parts) != 2 {
		return Pointer{}, &MalformedPointerError{Reason: "body is not a [class, {s3BucketName, s3Key}] array"}
	}
	var class string
	if err := json.Unmarshal(parts[0], &class); err != nil || class != PointerClass && class != LegacyPointerClass {
		return Pointer{}, &MalformedPointerError{Reason: fmt.Sprintf("class %s", parts[0])}
	}
	var p Pointer
	dec := json.NewDecoder(bytes.NewReader(parts[1]))
	if err := dec.Decode(&p); err != nil || p.Bucket == "" || p.Key == "" {
		return Pointer{}, &MalformedPointerError{Reason: "s3BucketName and s3Key are required"}
	}
	return p, nil
}
