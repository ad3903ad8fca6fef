package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/cloudevent"
)

// sample returns the consumer's sample batch (make invoke-<name>): an existing sample batch of
// its first event type, as another consumer receives it, or else a batch of one such event.
func (c *consumer) sample(root string) ([]byte, error) {
	paths, _ := filepath.Glob(filepath.Join(root, "events", "*-batch.json"))
	slices.Sort(paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var batch events.SQSEvent
		if json.Unmarshal(b, &batch) != nil || len(batch.Records) == 0 {
			continue
		}
		if ev, err := cloudevent.Decode([]byte(batch.Records[0].Body)); err == nil && ev.Type == c.Types[0] {
			return b, nil
		}
	}
	body, err := cloudevent.Encode(cloudevent.Event{ID: c.Name + "-sample-1", Source: "onceflow/sample", Type: c.Types[0],
		Subject: "sample-1", Time: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC), Data: []byte(`{}`)})
	if err != nil {
		return nil, fmt.Errorf("sample event: %w", err)
	}
	b, err := json.MarshalIndent(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "00000000-0000-4000-8000-000000000001",
		ReceiptHandle: "sample-1", Body: string(body), EventSource: "aws:sqs", AWSRegion: "eu-west-1",
		EventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:onceflow-" + c.Name + ".fifo",
		Attributes: map[string]string{"ApproximateReceiveCount": "1", "MessageGroupId": "sample-1",
			"MessageDeduplicationId": c.Name + "-sample-1", "SequenceNumber": "18900000000000000000", "SentTimestamp": "1796018400123"}}}}, "", "  ")
	return append(bytes.TrimSpace(b), '\n'), err
}
