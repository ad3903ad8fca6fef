package deadletter

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// sentAttributes are the message attributes l is sent again with: its own, and
// AttrOriginalMessageID naming the message as it was first sent, unless SQS's limit of
// MaxMessageAttributes leaves no room for it (the group's hold then knows the message by its
// event id only). nil when there are none.
func (l Letter) sentAttributes() map[string]types.MessageAttributeValue {
	attrs := make(map[string]types.MessageAttributeValue, len(l.Attributes)+1)
	for name, v := range l.Attributes {
		attrs[name] = v
	}
	if _, ok := attrs[AttrOriginalMessageID]; !ok && l.OriginalMessage != "" && len(attrs) < MaxMessageAttributes {
		addString(attrs, AttrOriginalMessageID, l.OriginalMessage)
	}
	if len(attrs) == 0 {
		return nil
	}
	return attrs
}

// SendInput returns the message l was, to send to the queue at queueURL: its body, its own
// message attributes (with AttrOriginalMessageID) and its AWSTraceHeader (as the message system attribute), never the
// attributes DeadLetter added; on a FIFO queue its group id (its event id when it has none),
// as GroupID of it (a stream key SQS refuses is sent as its digest). The caller sets
// MessageDeduplicationId: a redrive chooses a fresh one, or the letter's DedupID. The body of
// a letter DeadLetter offloaded is its pointer: Redrive sends the body it points to.
func (l Letter) SendInput(queueURL string) *sqs.SendMessageInput {
	in := &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(l.Body)}
	in.MessageAttributes = l.sentAttributes()
	if l.TraceHeader != "" {
		in.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{traceHeader: {
			DataType: aws.String("String"), StringValue: aws.String(l.TraceHeader)}}
	}
	if strings.HasSuffix(queueURL, ".fifo") {
		if g := firstNonEmpty(l.GroupID, l.EventID); g != "" {
			in.MessageGroupId = aws.String(GroupID(g))
		}
	}
	return in
}

// FromStream reports whether l was dead-lettered by a stream port (its source is a Kinesis
// stream's or a DynamoDB stream's ARN): its body is the record, which only its consumer's
// replay queue takes (ReplayInput).
func (l Letter) FromStream() bool {
	parts := strings.Split(l.SourceQueueARN, ":")
	return len(parts) > 2 && (parts[2] == "kinesis" || parts[2] == "dynamodb")
}

// ReplayInput returns the message a stream letter l is replayed as on its consumer's replay
// queue at queueURL (a FIFO queue the same function consumes through the port's replay path:
// batch.Replay): its body (the record), its trace header, its group as the queue's
// MessageGroupId (GroupID of its key), and what the replay's backstop, and a letter SQS moves
// by itself, must know of it before the record is read: the record's id
// (AttrOriginalMessageID, which the key's held list names), its key as it is
// (AttrSourceGroupID), its stream (AttrSourceQueueARN), and the event id and payload hash the
// consumer decoded (AttrEventID, AttrPayloadHash). The caller sets MessageDeduplicationId.
func (l Letter) ReplayInput(queueURL string) *sqs.SendMessageInput {
	in := l.SendInput(queueURL)
	if in.MessageAttributes == nil {
		in.MessageAttributes = map[string]types.MessageAttributeValue{}
	}
	for name, v := range map[string]string{AttrSourceQueueARN: l.SourceQueueARN, AttrEventID: l.DecodedEventID,
		AttrPayloadHash: l.PayloadHash} {
		if len(in.MessageAttributes) < MaxMessageAttributes {
			addString(in.MessageAttributes, name, v)
		}
	}
	if len(in.MessageAttributes) < MaxMessageAttributes {
		addText(in.MessageAttributes, AttrSourceGroupID, l.GroupID)
	}
	return in
}
