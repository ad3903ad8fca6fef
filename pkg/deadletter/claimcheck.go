package deadletter

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/claimcheck"
)

// Offloader stores a letter's body in S3 and returns the message that points to it, in the
// SQS extended client libraries' format (a pointer body and the ExtendedPayloadSize
// attribute): *claimcheck.Writer is one. It is called concurrently.
type Offloader interface {
	OffloadMessage(ctx context.Context, payload string) (string, map[string]types.MessageAttributeValue, error)
}

// offloadedType is the DataType of the size attribute of a letter whose body DeadLetter put
// in S3: SQS's Number with a custom type name, so that the letter is read as a pointer by the
// extended clients (which go by the attribute's name) and known to be the engine's by its
// readers here, with no attribute more than the format's. A redrive sends such a body back as
// it was (inline), unlike a producer's pointer, which it sends as it came.
const offloadedType = "Number.deadLetterBody"

// WithClaimCheck returns q sending a letter past SQS's 1 MiB (a stream record of several MiB,
// a body of SQS's full size with the engine's attributes) as a claim check written by o: the
// body an object in S3, the letter its pointer. The object is never deleted by the engine: the
// bucket's lifecycle rule expires it, so that rule must outlive the dead-letter queue's
// retention and a redrive (docs/large-payloads.md).
func (q *Queue) WithClaimCheck(o Offloader) *Queue {
	c := *q
	c.claims = o
	return &c
}

// offload writes msg's body through the claim check and returns its letter pointing to it.
func (q *Queue) offload(ctx context.Context, msg events.SQSMessage, reason error) (*sqs.SendMessageInput, error) {
	body, attrs, err := q.claims.OffloadMessage(ctx, msg.Body)
	if err != nil {
		return nil, fmt.Errorf("claim check of a %d-byte letter: %w", len(msg.Body), err)
	}
	size, ok := attrs[claimcheck.SizeAttribute]
	if !ok {
		return nil, fmt.Errorf("claim check of a %d-byte letter: no %s attribute", len(msg.Body), claimcheck.SizeAttribute)
	}
	size.DataType = aws.String(offloadedType)
	in, _, err := q.letter(msg, body, map[string]types.MessageAttributeValue{claimcheck.SizeAttribute: size}, reason)
	return in, err
}

// offloaded reports whether the message attribute is the size of a body DeadLetter offloaded,
// and the size.
func offloaded(v types.MessageAttributeValue) (int, bool) {
	if aws.ToString(v.DataType) != offloadedType {
		return 0, false
	}
	n, err := strconv.Atoi(aws.ToString(v.StringValue))
	return n, err == nil
}

// Payload returns the letter's payload: its body, or, when the body is a pointer (DeadLetter's
// claim check, or a producer's), the object it points to, read by r.
func (l Letter) Payload(ctx context.Context, r claimcheck.PayloadReader) (string, error) {
	if r == nil || !l.Offloaded && !l.isPointer() {
		return l.Body, nil
	}
	return r.Payload(ctx, events.SQSMessage{MessageId: l.MessageID, Body: l.Body, MessageAttributes: l.ownAttributes()})
}

// isPointer reports whether the body is a claim check's pointer.
func (l Letter) isPointer() bool {
	_, _, ok, _ := claimcheck.Parse(events.SQSMessage{Body: l.Body, MessageAttributes: l.ownAttributes()})
	return ok
}

// ownAttributes are l's own attributes as a received message's.
func (l Letter) ownAttributes() map[string]events.SQSMessageAttribute {
	attrs := make(map[string]events.SQSMessageAttribute, len(l.Attributes))
	for name, v := range l.Attributes {
		attrs[name] = events.SQSMessageAttribute{DataType: aws.ToString(v.DataType), StringValue: v.StringValue, BinaryValue: v.BinaryValue}
	}
	return attrs
}

// Resolved returns l as its payload shows it: l itself, or, for a letter whose body DeadLetter
// offloaded, l with the body read back through r, its event id and type read from it as
// Browse reads a body (the letter is still the one in the queue: Delete and Release act on
// it).
func (l Letter) Resolved(ctx context.Context, r claimcheck.PayloadReader) (Letter, error) {
	if !l.Offloaded {
		return l, nil
	}
	if r == nil {
		return l, fmt.Errorf("letter %s: its body is a claim check (%s): reading it needs S3", l.MessageID, l.Body)
	}
	body, err := l.Payload(ctx, r)
	if err != nil {
		return l, fmt.Errorf("letter %s: %w", l.MessageID, err)
	}
	l.Pointer, l.Body, l.Offloaded = l.Body, body, false
	l.readBody()
	return l, nil
}

// RedriveInput returns the message l is redriven as to the queue at queueURL (dlq.Redrive): its
// SendInput, or a stream letter's ReplayInput, with the body its claim check points to when
// DeadLetter offloaded it, read by r (a nil r fails such a letter). The caller sets
// MessageDeduplicationId.
func (l Letter) RedriveInput(ctx context.Context, r claimcheck.PayloadReader, queueURL string) (*sqs.SendMessageInput, error) {
	in := l.SendInput(queueURL)
	if l.FromStream() {
		in = l.ReplayInput(queueURL)
	}
	if err := l.sendBody(ctx, r, in); err != nil {
		return nil, err
	}
	return in, nil
}

// sendBody makes in, l's SendInput, carry the body l's claim check points to when DeadLetter
// offloaded it: inline when it fits SQS's 1 MiB beside its attributes, as the source sent it;
// else as the pointer with the extended clients' ExtendedPayloadSize (a consumer reading claim
// checks reads it, as it reads a producer's).
func (l Letter) sendBody(ctx context.Context, r claimcheck.PayloadReader, in *sqs.SendMessageInput) error {
	if !l.Offloaded {
		return nil
	}
	if r == nil {
		return fmt.Errorf("letter %s: its body is a claim check (%s) and the redrive reads no S3 (RedriveConfig.Payloads)", l.MessageID, l.Body)
	}
	body, err := l.Payload(ctx, r)
	if err != nil {
		return fmt.Errorf("letter %s: %w", l.MessageID, err)
	}
	size := len(body)
	for name, v := range in.MessageAttributes {
		size += len(name) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue)) + len(v.BinaryValue)
	}
	if size <= maxMessageBytes {
		in.MessageBody = aws.String(body)
		return nil
	}
	if len(in.MessageAttributes) >= MaxMessageAttributes {
		return fmt.Errorf("letter %s: a %d-byte body needs a claim check, and its %d attributes leave no room for %s", l.MessageID, len(body), len(in.MessageAttributes), claimcheck.SizeAttribute)
	}
	if in.MessageAttributes == nil {
		in.MessageAttributes = map[string]types.MessageAttributeValue{}
	}
	in.MessageAttributes[claimcheck.SizeAttribute] = types.MessageAttributeValue{DataType: aws.String("Number"),
		StringValue: aws.String(claimcheck.SizeAttributeValue(len(body)))}
	return nil
}
