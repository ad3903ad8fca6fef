package testkit

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/deadletter"
)

// Queue builds the SQS messages a Lambda function receives from one queue, with the attributes
// SQS sets and the engine reads: MessageGroupId, MessageDeduplicationId and an increasing
// SequenceNumber on a FIFO queue, ApproximateReceiveCount, SentTimestamp, the queue's ARN. It is
// safe for concurrent use.
type Queue struct {
	arn string
	mu  sync.Mutex
	n   int64
}

// FIFO returns a FIFO queue named name (".fifo" is added when missing).
func FIFO(name string) *Queue {
	if !strings.HasSuffix(name, ".fifo") {
		name += ".fifo"
	}
	return &Queue{arn: "arn:aws:sqs:us-east-1:000000000000:" + name}
}

// Standard returns a standard queue named name.
func Standard(name string) *Queue { return &Queue{arn: "arn:aws:sqs:us-east-1:000000000000:" + name} }

// ARN is the queue's ARN, the messages' EventSourceARN.
func (q *Queue) ARN() string { return q.arn }

func (q *Queue) fifo() bool { return strings.HasSuffix(q.arn, ".fifo") }

// Message returns a new message of group (ignored by a standard queue) carrying body, received
// for the first time. Each message has its own message id, deduplication id and (on a FIFO
// queue) a sequence number greater than the one before.
func (q *Queue) Message(group, body string) events.SQSMessage {
	q.mu.Lock()
	q.n++
	n := q.n
	q.mu.Unlock()
	sum := md5.Sum([]byte(body)) // SQS's MD5OfBody, a checksum
	m := events.SQSMessage{
		MessageId: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), ReceiptHandle: fmt.Sprintf("receipt-%d-1", n),
		Body: body, Md5OfBody: hex.EncodeToString(sum[:]), EventSource: "aws:sqs", EventSourceARN: q.arn, AWSRegion: "us-east-1",
		Attributes: map[string]string{
			"ApproximateReceiveCount":          "1",
			"SentTimestamp":                    strconv.FormatInt(time.Now().UnixMilli(), 10),
			"ApproximateFirstReceiveTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10),
			"SenderId":                         "AIDAEXAMPLE",
		},
	}
	if q.fifo() {
		m.Attributes["MessageGroupId"] = group
		m.Attributes["MessageDeduplicationId"] = fmt.Sprintf("dedup-%d", n)
		m.Attributes["SequenceNumber"] = fmt.Sprintf("188%017d", n)
	}
	return m
}

// Batch is the event Lambda passes the function: msgs in the order given, which on a FIFO
// queue is their groups' order. Several messages of one group in one batch is what Lambda
// sends from a FIFO queue (an emulator may hand out one per group at a time).
func Batch(msgs ...events.SQSMessage) events.SQSEvent {
	return events.SQSEvent{Records: append([]events.SQSMessage(nil), msgs...)}
}

// Again is m received again, as SQS redelivers a message whose visibility timeout ran out (the
// function failed, timed out, or answered it failed): the same message id and body, the next
// ApproximateReceiveCount, a new receipt handle.
func Again(m events.SQSMessage) events.SQSMessage {
	n, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	n = max(n, 1) // a message built by hand was received once
	m.Attributes = maps.Clone(m.Attributes)
	if m.Attributes == nil {
		m.Attributes = map[string]string{}
	}
	m.Attributes["ApproximateReceiveCount"] = strconv.Itoa(n + 1)
	m.ReceiptHandle = fmt.Sprintf("%s-again-%d", m.ReceiptHandle, n+1)
	return m
}

// Resent is m's body sent again as a new message of its group: a new message id, deduplication
// id and sequence number. That is what a producer's retry after SQS's five-minute deduplication
// window or a second publish call sends; only the consumer's record makes it a duplicate. (A
// redrive from a dead-letter queue carries more: Redriven.)
func (q *Queue) Resent(m events.SQSMessage) events.SQSMessage {
	return q.Message(m.Attributes["MessageGroupId"], m.Body)
}

// Redriven is m as `onceflow dlq redrive` (dlq.Redrive) sends it back to its source
// queue, and so as the consumer receives it again: a new message of its group (a new message
// id, deduplication id and sequence number) with m's own message attributes and the id m was
// first sent as (deadletter.AttrOriginalMessageID: m's own, if m was redriven before, else its
// message id), by which its group's hold knows it.
func (q *Queue) Redriven(m events.SQSMessage) events.SQSMessage {
	r := q.Message(m.Attributes["MessageGroupId"], m.Body)
	r.MessageAttributes = maps.Clone(m.MessageAttributes)
	if r.MessageAttributes == nil {
		r.MessageAttributes = map[string]events.SQSMessageAttribute{}
	}
	if _, ok := r.MessageAttributes[deadletter.AttrOriginalMessageID]; !ok {
		id := m.MessageId
		r.MessageAttributes[deadletter.AttrOriginalMessageID] = events.SQSMessageAttribute{DataType: "String", StringValue: &id}
	}
	return r
}

// Group returns a new message of group for each body, in order (increasing sequence numbers):
// with Batch, the several messages of one group that Lambda hands a function in one batch from a
// FIFO queue.
func (q *Queue) Group(group string, bodies ...string) []events.SQSMessage {
	msgs := make([]events.SQSMessage, len(bodies))
	for i, b := range bodies {
		msgs[i] = q.Message(group, b)
	}
	return msgs
}
