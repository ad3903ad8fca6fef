package deadletter

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
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
	DeadLetteredAt  string // AttrDeadLetteredAt, else when it was first sent (RFC 3339)
	EventID         string // DecodedEventID, else the CloudEvent's id, "" when the body is not one
	// DecodedEventID is the event id the consumer decoded (AttrEventID, WithEventID); "" when
	// it wrote none (a letter SQS moved, one dead-lettered before it was decoded).
	DecodedEventID string
	EventType      string // the CloudEvent's type, "" when the body is not one
	TraceHeader    string // the AWSTraceHeader system attribute, if any
	// PayloadHashes are the payload hashes of the event the consumer decoded (AttrPayloadHash,
	// WithEvent): the canonical one, then the legacy one when it differs; nil when it wrote
	// none.
	PayloadHashes []string
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
	Attributes    map[string]types.MessageAttributeValue
	receiptHandle string
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

// letterOf reads a received message.
func letterOf(m types.Message) Letter {
	attr := func(name string) string { return aws.ToString(m.MessageAttributes[name].StringValue) }
	l := Letter{
		MessageID: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), receiptHandle: aws.ToString(m.ReceiptHandle),
		Reason: attr(AttrReason), SourceQueueARN: attr(AttrSourceQueueARN), ReceiveCount: attr(AttrReceiveCount),
		SourceMessage:  firstNonEmpty(attr(AttrSourceMessageID), aws.ToString(m.MessageId)),
		GroupID:        firstNonEmpty(textOf(m.MessageAttributes[AttrSourceGroupID]), m.Attributes["MessageGroupId"]),
		DedupID:        firstNonEmpty(attr(AttrSourceDedupID), m.Attributes["MessageDeduplicationId"]),
		DeadLetteredAt: firstNonEmpty(attr(AttrDeadLetteredAt), sentAt(m.Attributes["SentTimestamp"])),
		TraceHeader:    m.Attributes["AWSTraceHeader"],
		Attributes:     map[string]types.MessageAttributeValue{},
		raw:            m.MessageAttributes,
		queueGroup:     m.Attributes["MessageGroupId"],
	}
	l.DecodedEventID = attr(AttrEventID)
	l.PayloadHashes = strings.Fields(attr(AttrPayloadHash))
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
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return ""
	}
	return time.UnixMilli(n).UTC().Format(time.RFC3339)
}

// Filter selects letters; its zero value selects every one.
type Filter struct {
	Reason    string // a letter whose Why contains this text (case-insensitive)
	EventType string // a letter whose event type is this
	Group     string // a letter of this message group (a FIFO queue's group id: an account)
}

// Match reports whether f selects l.
func (f Filter) Match(l Letter) bool {
	if f.Reason != "" && !strings.Contains(strings.ToLower(l.Why()), strings.ToLower(f.Reason)) {
		return false
	}
	if f.Group != "" && l.GroupID != f.Group {
		return false
	}
	return f.EventType == "" || l.EventType == f.EventType
}

// ReceiveAPI is the SQS calls that reading a dead-letter queue makes; *sqs.Client implements it.
type ReceiveAPI interface {
	ReceiveMessage(ctx context.Context, params *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	ChangeMessageVisibility(ctx context.Context, params *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// VisibilityHold is how long Browse keeps the letters it has seen invisible to others: until it returns,
// when it makes them visible again.
const VisibilityHold = 5 * time.Minute

// Browse receives the letters of the dead-letter queue at queueURL in the queue's order and
// calls fn with each until fn returns false or the queue has no more to hand out; then it
// makes every letter it received visible again, so nothing leaves the queue. On a FIFO queue
// SQS hands out no later message of a group while an earlier one is received, so Browse sees
// the first letters of each group (up to ten per receive on AWS; the first only on some
// emulators); ApproximateNumberOfMessages tells how many there are.
func Browse(ctx context.Context, client ReceiveAPI, queueURL string, fn func(Letter) bool) error {
	var seen []Letter
	defer func() { release(context.WithoutCancel(ctx), client, queueURL, seen) }()
	for {
		batch, err := receive(ctx, client, queueURL, VisibilityHold)
		if err != nil || len(batch) == 0 {
			return err
		}
		seen = append(seen, batch...) // the whole batch: stopping early must release it all
		for _, l := range batch {
			if !fn(l) {
				return nil
			}
		}
	}
}

// receive returns the next letters the queue hands out, holding them for hold.
func receive(ctx context.Context, client ReceiveAPI, queueURL string, hold time.Duration) ([]Letter, error) {
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(queueURL), MaxNumberOfMessages: 10, VisibilityTimeout: int32(max(hold/time.Second, 1)),
		WaitTimeSeconds:             1, // a long poll asks every server: an empty answer means empty
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", queueURL, err)
	}
	letters := make([]Letter, len(out.Messages))
	for i, m := range out.Messages {
		letters[i] = letterOf(m)
	}
	return letters, nil
}

// release makes the letters visible again at once.
func release(ctx context.Context, client ReceiveAPI, queueURL string, letters []Letter) {
	for _, l := range letters {
		_, _ = client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
			QueueUrl: aws.String(queueURL), ReceiptHandle: aws.String(l.receiptHandle), VisibilityTimeout: 0})
	}
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
