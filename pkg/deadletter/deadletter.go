package deadletter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SendMessageAPI is the one SQS call a Queue makes; *sqs.Client implements it.
type SendMessageAPI interface {
	SendMessage(ctx context.Context, params *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Message attributes a dead-lettered message carries.
const (
	AttrReason          = "reason"          // the error text, truncated to fit
	AttrSourceMessageID = "sourceMessageId" // the SQS message id it had on its source queue
	AttrSourceQueueARN  = "sourceQueueArn"  // the queue it was received from
	AttrSourceGroupID   = "sourceGroupId"   // its group there as the hold names it (FIFO: its MessageGroupId; a stream: its key, Binary when SQS refuses its characters)
	AttrSourceDedupID   = "sourceDedupId"   // its MessageDeduplicationId there (the event id), what a redrive sends again
	AttrReceiveCount    = "receiveCount"    // ApproximateReceiveCount when it was dead-lettered
	AttrDeadLetteredAt  = "deadLetteredAt"  // RFC 3339, UTC
	// AttrEventID is the event id the consumer decoded (WithEventID), which the body may not
	// show (a claim check's pointer, an envelope keyed by a business key).
	AttrEventID = "decodedEventId"
	// AttrPayloadHash is the payload hash of the event the consumer decoded (WithEvent), which
	// a discard records: hashed by the consumer's own decoder, whatever the body is.
	AttrPayloadHash = "decodedPayloadHash"
	// AttrSourceAttributes carries the message's own message attributes as one JSON object
	// (name to {DataType, StringValue, BinaryValue}) when they do not fit beside the engine's
	// within SQS's limit of MaxMessageAttributes, or one of them has an engine's name.
	AttrSourceAttributes = "sourceAttributes"
)

// AttrOriginalMessageID is the message attribute a redrive sends each letter with: the id of
// the message as it was first sent (the letter's own, for a letter SQS moved by itself). It is
// the message's own attribute from then on (a letter dead-lettered again keeps it), and a port
// reads it (sqsbatch: port.Delivery.Origin) so that the group's held list recognises
// the message it held under that id, before decoding it or under its first message id.
const AttrOriginalMessageID = "onceflowOriginalMessageId"

// MaxMessageAttributes is SQS's limit of message attributes per message.
const MaxMessageAttributes = 10

// traceHeader is the message system attribute of a message's X-Ray trace.
const traceHeader = "AWSTraceHeader"

// MaxReasonBytes bounds the reason attribute; longer reasons are cut at a character boundary.
// MinReasonBytes of it are kept however large the body.
const (
	MaxReasonBytes = 4096
	MinReasonBytes = 256
)

// The SQS message size limits that body and attributes must fit together: SQS takes up to
// 1 MiB, but 256 KiB was its limit for years, and a queue may still be set to it. A dead
// letter is sized for the smaller limit when it fits it with MinReasonBytes of reason (a body
// from a queue of the old limit then fits a dead-letter queue of that limit too), for 1 MiB
// otherwise.
const (
	maxMessageBytes    = 1 << 20
	legacyMessageBytes = 256 * 1024
)

// Queue is a dead-letter queue. It is safe for concurrent use.
type Queue struct {
	client SendMessageAPI
	url    string
	fifo   bool
	now    func() time.Time
	claims Offloader // nil: a letter past SQS's limit is refused by SQS
}

// New returns the dead-letter queue at queueURL. It is a FIFO queue iff the URL ends in ".fifo".
func New(client SendMessageAPI, queueURL string) *Queue {
	return &Queue{client: client, url: queueURL, fifo: strings.HasSuffix(queueURL, ".fifo"), now: time.Now}
}

// DeadLetter sends msg's body unchanged to the queue with reason and its origin as message
// attributes, and with the message's own message attributes and its AWSTraceHeader, so that a
// redrive sends the message back as it came (see Letter.SendInput). The message's attributes
// are kept as they are while they fit beside the engine's within SQS's MaxMessageAttributes;
// beyond, they travel in one attribute, AttrSourceAttributes, which Letter reads back. On a
// FIFO queue it keeps msg's MessageGroupId (its message id when it has none; GroupID of it when
// SQS would refuse it as a group: a stream's key), and AttrSourceGroupID names the group as it
// is; it deduplicates on msg's message id, so dead-lettering one delivery twice within SQS's
// five-minute window stores it once, while the same event redriven and failing again (a new
// message) is stored again. A letter past SQS's 1 MiB goes through a claim check when the queue
// has one (WithClaimCheck), else SQS refuses it and the caller fails the message.
func (q *Queue) DeadLetter(ctx context.Context, msg events.SQSMessage, reason error) error {
	in, fits, err := q.letter(msg, msg.Body, nil, reason)
	if err == nil && !fits && q.claims != nil {
		in, err = q.offload(ctx, msg, reason)
	}
	if err != nil {
		return fmt.Errorf("dead-letter message %s: %w", msg.MessageId, err)
	}
	if _, err := q.client.SendMessage(ctx, in); err != nil {
		return fmt.Errorf("dead-letter message %s: %w", msg.MessageId, err)
	}
	return nil
}

// letter is the SendMessage of msg's letter with body and the engine's extra attributes, and
// whether it fits SQS's 1 MiB with MinReasonBytes of its reason.
func (q *Queue) letter(msg events.SQSMessage, body string, extra map[string]types.MessageAttributeValue, reason error) (*sqs.SendMessageInput, bool, error) {
	in := &sqs.SendMessageInput{
		QueueUrl:          aws.String(q.url),
		MessageBody:       aws.String(body),
		MessageAttributes: map[string]types.MessageAttributeValue{},
	}
	group := msg.Attributes["MessageGroupId"]
	if q.fifo {
		in.MessageGroupId = aws.String(GroupID(firstNonEmpty(group, msg.MessageId)))
		// The message id, not the event's dedup id: a repeat of this delivery is dropped, but
		// the same event redriven and failing again is a new message and must be kept.
		in.MessageDeduplicationId = aws.String(msg.MessageId)
	}
	if h := msg.Attributes[traceHeader]; h != "" {
		in.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{traceHeader: {
			DataType: aws.String("String"), StringValue: aws.String(h)}}
	}
	budget := legacyMessageBytes - len(body)
	for name, value := range map[string]string{
		AttrSourceMessageID: msg.MessageId,
		AttrSourceQueueARN:  msg.EventSourceARN,
		AttrSourceDedupID:   msg.Attributes["MessageDeduplicationId"],
		AttrReceiveCount:    msg.Attributes["ApproximateReceiveCount"],
		AttrDeadLetteredAt:  q.now().UTC().Format(time.RFC3339),
		AttrEventID:         eventIDOf(reason),
	} {
		budget -= addString(in.MessageAttributes, name, value)
	}
	budget -= addText(in.MessageAttributes, AttrSourceGroupID, group)
	for name, v := range extra {
		in.MessageAttributes[name] = v
		budget -= len(name) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue))
	}
	if reason != nil {
		budget -= len(AttrReason) + len("String") + MinReasonBytes // its room, counted below
	}
	n, err := addOwn(in.MessageAttributes, msg.MessageAttributes, reason != nil)
	if err != nil {
		return nil, false, err
	}
	budget -= n
	if hash := payloadHashOf(reason); hash != "" && len(in.MessageAttributes)+1 < MaxMessageAttributes {
		// Only where SQS's limit leaves room: without it a discard hashes the letter as a
		// CloudEvent.
		budget -= addString(in.MessageAttributes, AttrPayloadHash, hash)
	}
	if budget < 0 { // too large for the old 256 KiB limit anyway: sized for SQS's 1 MiB
		budget += maxMessageBytes - legacyMessageBytes
	}
	if reason != nil {
		// Never less than MinReasonBytes: a dead letter without its reason helps nobody, and a
		// queue whose size limit that exceeds refuses the send, which fails the message
		// instead (SQS's redrive policy then moves it, nothing lost).
		limit := min(MaxReasonBytes, MinReasonBytes+max(0, budget))
		addString(in.MessageAttributes, AttrReason, truncate(sanitize(reason.Error()), limit))
	}
	return in, budget >= 0, nil
}

// packed is one message attribute inside AttrSourceAttributes.
type packed struct {
	DataType    string  `json:"DataType"`
	StringValue *string `json:"StringValue,omitempty"`
	BinaryValue []byte  `json:"BinaryValue,omitempty"` // base64 in JSON
}

// addOwn adds the message's own attributes to attrs, which holds the engine's (and will hold
// the reason too when withReason): each as it is when all fit within MaxMessageAttributes and
// none has an engine's name, else all in AttrSourceAttributes. It returns the bytes they count
// toward the message size.
func addOwn(attrs map[string]types.MessageAttributeValue, own map[string]events.SQSMessageAttribute, withReason bool) (int, error) {
	if len(own) == 0 {
		return 0, nil
	}
	used := len(attrs)
	if withReason {
		used++
	}
	asIs := used+len(own) <= MaxMessageAttributes
	for name := range own {
		if ours(name) {
			asIs = false
		}
	}
	size := 0
	if asIs {
		for name, a := range own {
			v := types.MessageAttributeValue{DataType: aws.String(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
			attrs[name] = v
			size += len(name) + len(a.DataType) + len(aws.ToString(a.StringValue)) + len(a.BinaryValue)
		}
		return size, nil
	}
	all := make(map[string]packed, len(own))
	for name, a := range own {
		all[name] = packed{DataType: a.DataType, StringValue: a.StringValue, BinaryValue: a.BinaryValue}
	}
	b, err := json.Marshal(all)
	if err != nil {
		return 0, fmt.Errorf("encode the message's attributes: %w", err)
	}
	return addString(attrs, AttrSourceAttributes, string(b)), nil
}

// unpack reads AttrSourceAttributes.
func unpack(s string) (map[string]types.MessageAttributeValue, error) {
	var all map[string]packed
	if err := json.Unmarshal([]byte(s), &all); err != nil {
		return nil, fmt.Errorf("decode %s: %w", AttrSourceAttributes, err)
	}
	attrs := make(map[string]types.MessageAttributeValue, len(all))
	for name, a := range all {
		attrs[name] = types.MessageAttributeValue{DataType: aws.String(a.DataType), StringValue: a.StringValue, BinaryValue: a.BinaryValue}
	}
	return attrs, nil
}

// addText sets value as a String attribute when SQS takes its characters, else as a Binary
// one (its UTF-8 bytes), so that it is kept exactly: a stream's key may hold any character.
// It returns the bytes it counts toward the message size.
func addText(attrs map[string]types.MessageAttributeValue, name, value string) int {
	if value == "" || sanitize(value) == value {
		return addString(attrs, name, value)
	}
	attrs[name] = types.MessageAttributeValue{DataType: aws.String("Binary"), BinaryValue: []byte(value)}
	return len(name) + len("Binary") + len(value)
}

// textOf reads an attribute addText wrote.
func textOf(v types.MessageAttributeValue) string {
	if v.StringValue != nil {
		return *v.StringValue
	}
	return string(v.BinaryValue)
}

// addString sets a String attribute unless value is empty (SQS rejects empty values) and
// returns the bytes it counts toward the message size.
func addString(attrs map[string]types.MessageAttributeValue, name, value string) int {
	if value == "" {
		return 0
	}
	attrs[name] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(value)}
	return len(name) + len("String") + len(value)
}

// sanitize makes s valid UTF-8 made of the characters SQS accepts (#x9, #xA, #xD, #x20 to
// #xD7FF, #xE000 to #xFFFD, #x10000 to #x10FFFF), replacing the others with U+FFFD.
func sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF,
			r >= 0xE000 && r <= 0xFFFD,
			r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}

// truncate cuts s to at most limit bytes at a character boundary, marking the cut with "…".
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const mark = "…"
	if limit < len(mark) {
		return ""
	}
	cut := limit - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
