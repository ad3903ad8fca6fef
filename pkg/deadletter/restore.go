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
