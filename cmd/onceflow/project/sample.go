package project

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// sample is the consumer's sample batch: one event of its type as its queue delivers it.
func (c consumer) sample() ([]byte, error) {
	body, err := cloudevent.Encode(cloudevent.Event{ID: c.Name + "-sample-1", Source: "example/" + c.Name, Type: c.Event,
		Subject: "sample-1", Time: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC), Data: []byte(`{"id":"sample-1"}`)})
	if err != nil {
		return nil, fmt.Errorf("sample event: %w", err)
	}
	b, err := json.MarshalIndent(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "00000000-0000-4000-8000-000000000001",
		ReceiptHandle: "sample-1", Body: string(body), EventSource: "aws:sqs", AWSRegion: "eu-west-1",
		EventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:" + c.Name + ".fifo",
		Attributes: map[string]string{"ApproximateReceiveCount": "1", "MessageGroupId": "sample-1",
			"MessageDeduplicationId": c.Name + "-sample-1", "SequenceNumber": "18900000000000000000", "SentTimestamp": "1796018400123"}}}}, "", "  ")
	return append(bytes.TrimSpace(b), '\n'), err
}
