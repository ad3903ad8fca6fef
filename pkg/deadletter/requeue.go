package deadletter

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// RequeueInput returns the message l, received from the dead-letter queue at queueURL, is
// sent again as to go to the end of that queue (dlq.Requeue): with all it carries (its body,
// its attributes, its trace header, its group) under a fresh deduplication id, so that on a
// FIFO queue it comes after every other letter of its group. A letter SQS moved by itself
// gains the attributes that name its source message, its receive count and when it was moved,
// which its new message id and timestamp would lose.
func (l Letter) RequeueInput(queueURL string) (*sqs.SendMessageInput, error) {
	in := &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(l.Body)}
	attrs, err := l.keptAttributes()
	if err != nil {
		return nil, err
	}
	if len(attrs) > 0 {
		in.MessageAttributes = attrs
	}
	if l.TraceHeader != "" {
		in.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{traceHeader: {
			DataType: aws.String("String"), StringValue: aws.String(l.TraceHeader)}}
	}
	if l.queueGroup != "" {
		in.MessageGroupId = aws.String(l.queueGroup)
		in.MessageDeduplicationId = aws.String("requeue-" + rand.Text())
	}
	return in, nil
}

// keptAttributes are l's attributes as received, with those that name its source message
// added where it has none (a letter SQS moved by itself): what it must keep when it becomes a
// new message. The letter's own attributes travel packed in AttrSourceAttributes when they
// would pass SQS's limit of MaxMessageAttributes beside them.
func (l Letter) keptAttributes() (map[string]types.MessageAttributeValue, error) {
	attrs := maps.Clone(l.raw)
	if attrs == nil {
		attrs = map[string]types.MessageAttributeValue{}
	}
	missing := map[string]string{}
	for name, v := range map[string]string{AttrSourceMessageID: l.SourceMessage, AttrSourceGroupID: l.GroupID,
		AttrSourceDedupID: l.DedupID, AttrReceiveCount: l.ReceiveCount, AttrDeadLetteredAt: l.DeadLetteredAt} {
		if _, ok := attrs[name]; !ok && v != "" {
			missing[name] = v
		}
	}
	if len(attrs)+len(missing) > MaxMessageAttributes {
		own := map[string]packed{}
		if s := aws.ToString(attrs[AttrSourceAttributes].StringValue); s != "" {
			if err := json.Unmarshal([]byte(s), &own); err != nil {
				return nil, fmt.Errorf("decode %s: %w", AttrSourceAttributes, err)
			}
		}
		for name, v := range attrs {
			if !ours(name) {
				own[name] = packed{DataType: aws.ToString(v.DataType), StringValue: v.StringValue, BinaryValue: v.BinaryValue}
				delete(attrs, name)
			}
		}
		b, err := json.Marshal(own)
		if err != nil {
			return nil, fmt.Errorf("encode the letter's attributes: %w", err)
		}
		addString(attrs, AttrSourceAttributes, string(b))
	}
	for name, v := range missing {
		if len(attrs) < MaxMessageAttributes || name == AttrSourceMessageID {
			addString(attrs, name, v)
		}
	}
	return attrs, nil
}
