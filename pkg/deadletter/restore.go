package deadletter

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SendInput returns the message l was, to send to the queue at queueURL: its body, its own
// message attributes and its AWSTraceHeader (as the message system attribute), never the
// attributes DeadLetter added; on a FIFO queue its group id (its event id when it has none).
// The caller sets MessageDeduplicationId: a redrive chooses a fresh one, or the letter's
// DedupID.
func (l Letter) SendInput(queueURL string) *sqs.SendMessageInput {
	in := &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(l.Body)}
	if len(l.Attributes) > 0 {
		in.MessageAttributes = make(map[string]types.MessageAttributeValue, len(l.Attributes))
		for name, v := range l.Attributes {
			in.MessageAttributes[name] = v
		}
	}
	if l.TraceHeader != "" {
		in.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{traceHeader: {
			DataType: aws.String("String"), StringValue: aws.String(l.TraceHeader)}}
	}
	if strings.HasSuffix(queueURL, ".fifo") {
		if g := firstNonEmpty(l.GroupID, l.EventID); g != "" {
			in.MessageGroupId = aws.String(g)
		}
	}
	return in
}
