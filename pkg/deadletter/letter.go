package deadletter

import (
	"encoding/json"
	"maps"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/claimcheck"
)

// Letter is a message found in a dead-letter queue: one the consumer dead-lettered (with the
// attributes DeadLetter adds) or one SQS moved there by the source queue's redrive policy
// (which keeps its own attributes and has no reason).
type Letter struct {
	MessageID      string // in the dead-letter queue
	Body           string
	Reason         string // AttrReason; "" for a message SQS moved after maxReceiveCount receives
	SourceQueueARN string // AttrSourceQueueARN, "" when SQS moved it
	SourceMessage  string // AttrSourceMessageID, else the message id (SQS keeps it when it moves one)
	// OriginalMessage is the id the message was first sent as: its AttrOriginalMessageID
	// (it was redriven before), else SourceMessage. A group's held list knows it by this id.
	OriginalMessage string
	GroupID         string // AttrSourceGroupID, else the message's own MessageGroupId
	DedupID         string // AttrSourceDedupID, else the message's own MessageDeduplicationId
	ReceiveCount    string // AttrReceiveCount: receives on the source queue when dead-lettered
	DeadLetteredAt  string // AttrDeadLetteredAt, else when the queue took it (Enqueued, RFC 3339)
	// Enqueued is when the dead-letter queue took the letter, by SQS's clock (SentTimestamp; a
	// FIFO queue sets it anew when SQS moves a message to it); zero when SQS did not say.
	Enqueued time.Time
	EventID  string // DecodedEventID, else the CloudEvent's id, "" when the body is not one
	// DecodedEventID is the event id the consumer decoded (AttrEventID, WithEventID); "" when
	// it wrote none (a letter SQS moved, one dead-lettered before it was decoded).
	DecodedEventID string
	EventType      string // the CloudEvent's type, "" when the body is not one
	TraceHeader    string // the AWSTraceHeader system attribute, if any
	// PayloadHash is the payload hash of the event the consumer decoded (AttrPayloadHash,
	// WithEvent); "" when it wrote none.
	PayloadHash string
	// Offloaded says the body is a claim check DeadLetter wrote (the letter was past SQS's
	// limit): Body is the pointer, PayloadSize the size of the body it points to. Resolved
	// reads it; a redrive sends the body it points to.
	Offloaded   bool
	PayloadSize int
	// Pointer is the claim check's pointer of a letter Resolved read ("" otherwise): Body is
	// then the body it pointed to.
	Pointer string

	// Attributes are the message's own message attributes (those DeadLetter packed into
	// AttrSourceAttributes included), which a redrive sends again (SendInput).
	Attributes map[string]types.MessageAttributeValue
	// ReceiptHandle is the handle of this receipt of it, by which the receiver deletes it or
	// makes it visible again.
	ReceiptHandle string
	raw           map[string]types.MessageAttributeValue // the letter's attributes as received
	queueGroup    string                                 // the letter's MessageGroupId in the dead-letter queue
}

// movedBySQS is what a letter without a reason attribute means.
const movedBySQS = "moved by the source queue's redrive policy (maxReceiveCount): crashes, timeouts or a batch failure"

// Why is the letter's reason, or what a letter without one means.
func (l Letter) Why() string {
	if l.Reason != "" {
		return l.Reason
	}
	return movedBySQS
}

// Read reads a message received from a dead-letter queue as a letter.
func Read(m types.Message) Letter {
	attr := func(name string) string { return aws.ToString(m.MessageAttributes[name].StringValue) }
	l := Letter{
		MessageID: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), ReceiptHandle: aws.ToString(m.ReceiptHandle),
		Reason: attr(AttrReason), SourceQueueARN: attr(AttrSourceQueueARN), ReceiveCount: attr(AttrReceiveCount),
		SourceMessage:  firstNonEmpty(attr(AttrSourceMessageID), aws.ToString(m.MessageId)),
		GroupID:        firstNonEmpty(textOf(m.MessageAttributes[AttrSourceGroupID]), m.Attributes["MessageGroupId"]),
		DedupID:        firstNonEmpty(attr(AttrSourceDedupID), m.Attributes["MessageDeduplicationId"]),
		DeadLetteredAt: firstNonEmpty(attr(AttrDeadLetteredAt), sentAt(m.Attributes["SentTimestamp"])),
		Enqueued:       unixMilli(m.Attributes["SentTimestamp"]),
		TraceHeader:    m.Attributes["AWSTraceHeader"],
		Attributes:     map[string]types.MessageAttributeValue{},
		raw:            m.MessageAttributes,
		queueGroup:     m.Attributes["MessageGroupId"],
	}
	l.DecodedEventID = attr(AttrEventID)
	l.PayloadHash = attr(AttrPayloadHash)
	if l.ReceiveCount == "" {
		l.ReceiveCount = m.Attributes["ApproximateReceiveCount"]
	}
	for name, v := range m.MessageAttributes {
		if n, ok := offloaded(v); ok && name == claimcheck.SizeAttribute {
			l.Offloaded, l.PayloadSize = true, n
			continue
		}
		if !ours(name) {
			l.Attributes[name] = v
		}
	}
	if s := attr(AttrSourceAttributes); s != "" {
		if own, err := unpack(s); err == nil { // else it stays unread, visible in none of them
			maps.Copy(l.Attributes, own)
		}
	}
	l.OriginalMessage = firstNonEmpty(aws.ToString(l.Attributes[AttrOriginalMessageID].StringValue), l.SourceMessage)
	l.readBody()
	return l
}

// readBody takes the event's id and type from the body, leniently: a malformed event's id and
// type are worth showing too, and so are those of an outbox item the relay parked
// (outbox.Parked: eventId, eventType and its reason). The consumer's decoded id comes first.
func (l *Letter) readBody() {
	var ev struct {
		ID, Type, Reason   any
		EventID, EventType any // eventId, eventType: encoding/json matches names without regard to case
	}
	if json.Unmarshal([]byte(l.Body), &ev) == nil {
		l.EventID, l.EventType = firstNonEmpty(text(ev.ID), text(ev.EventID)), firstNonEmpty(text(ev.Type), text(ev.EventType))
		if l.Reason == "" && l.SourceQueueARN == "" {
			l.Reason = text(ev.Reason)
		}
	}
	l.EventID = firstNonEmpty(l.DecodedEventID, l.EventID)
}

// ours reports whether name is an attribute DeadLetter adds.
func ours(name string) bool {
	switch name {
	case AttrReason, AttrEventID, AttrPayloadHash, AttrSourceMessageID, AttrSourceQueueARN, AttrSourceGroupID, AttrSourceDedupID,
		AttrReceiveCount, AttrDeadLetteredAt, AttrSourceAttributes:
		return true
	}
	return false
}

func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

func sentAt(ms string) string {
	t := unixMilli(ms)
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

// unixMilli is the time ms (milliseconds since the epoch, as SQS writes its timestamps) says,
// in UTC; zero when ms is not a number.
func unixMilli(ms string) time.Time {
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}

// OwnAttributes are a received message's own message attributes: attrs without those a dead
// letter carries (DeadLetter's, which a redrive's replay sends too), so that a message
// dead-lettered as it came does not pass them off as its own.
func OwnAttributes(attrs map[string]events.SQSMessageAttribute) map[string]events.SQSMessageAttribute {
	own := map[string]events.SQSMessageAttribute{}
	for name, a := range attrs {
		if !ours(name) {
			own[name] = a
		}
	}
	return own
}
