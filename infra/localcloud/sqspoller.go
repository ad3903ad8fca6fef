package localcloud

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/sqsbatch"
)

// sqsAPI is what the SQS poller needs of the SQS client.
type sqsAPI interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// sqsPoller emulates an SQS event source mapping: receive, invoke, delete what succeeded.
type sqsPoller struct {
	function string
	event    Event
	queueURL string
	sqs      sqsAPI
	invoker  Invoker
	timeout  time.Duration // function timeout plus slack: the longest an invoke may take
	onError  func(msg string, args ...any)
	count    func(func(*MappingStats))
}

// run polls until ctx ends. Several may run for one mapping, as Lambda's pollers do.
func (p *sqsPoller) run(ctx context.Context) {
	for ctx.Err() == nil {
		msgs, err := p.receive(ctx)
		if err != nil {
			if ctx.Err() == nil {
				p.onError("sqs receive", "queue", p.event.Source, "err", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		if len(msgs) > 0 {
			p.deliver(ctx, msgs)
		}
	}
}

func (p *sqsPoller) receive(ctx context.Context) ([]sqstypes.Message, error) {
	out, err := p.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(p.queueURL),
		MaxNumberOfMessages:         int32(min(p.event.BatchSize, 10)),
		WaitTimeSeconds:             1,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, err
	}
	return out.Messages, nil
}

// deliver invokes the function with one batch and deletes the messages it did not report
// failed; a failed invocation deletes none.
func (p *sqsPoller) deliver(ctx context.Context, msgs []sqstypes.Message) {
	msgs = p.dropFiltered(ctx, msgs)
	if len(msgs) == 0 {
		return
	}
	payload, err := json.Marshal(sqsbatch.EventOf(msgs, p.event.SourceARN))
	if err != nil {
		p.onError("sqs event", "err", err)
		return
	}
	ictx, cancel := context.WithTimeout(ctx, p.timeout)
	out, err := p.invoker.Invoke(ictx, p.function, payload)
	cancel()
	p.count(func(s *MappingStats) {
		s.Batches++
		s.Records += len(msgs)
		s.LargestBatch = max(s.LargestBatch, len(msgs))
		if err != nil {
			s.FailedBatches++
		}
	})
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			p.onError("sqs invoke failed: batch left to the visibility timeout", "function", p.function, "messages", len(msgs), "err", err)
		}
		return
	}
	failed := map[string]bool{}
	if p.event.ReportFailures {
		var resp events.SQSEventResponse
		if len(out) > 0 && string(out) != "null" {
			if err := json.Unmarshal(out, &resp); err != nil {
				p.onError("sqs response is not an SQSEventResponse: batch failed", "function", p.function, "err", err)
				return
			}
		}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
	}
	var entries []sqstypes.DeleteMessageBatchRequestEntry
	for _, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: m.MessageId, ReceiptHandle: m.ReceiptHandle})
		}
	}
	p.count(func(s *MappingStats) { s.ItemFailures += len(msgs) - len(entries) })
	n := p.delete(ctx, entries)
	p.count(func(s *MappingStats) { s.Succeeded += n })
}

// dropFiltered deletes the messages FilterCriteria rejects, as Lambda does, and returns the rest.
func (p *sqsPoller) dropFiltered(ctx context.Context, msgs []sqstypes.Message) []sqstypes.Message {
	if len(p.event.Filter) == 0 {
		return msgs
	}
	var kept []sqstypes.Message
	var drop []sqstypes.DeleteMessageBatchRequestEntry
	for i, rec := range sqsbatch.EventOf(msgs, p.event.SourceARN).Records {
		if p.event.Filter.match(sqsFilterView(rec)) {
			kept = append(kept, msgs[i])
		} else {
			drop = append(drop, sqstypes.DeleteMessageBatchRequestEntry{Id: msgs[i].MessageId, ReceiptHandle: msgs[i].ReceiptHandle})
		}
	}
	n := p.delete(ctx, drop)
	p.count(func(s *MappingStats) { s.Filtered += n })
	return kept
}

// delete deletes messages and returns how many were deleted.
func (p *sqsPoller) delete(ctx context.Context, entries []sqstypes.DeleteMessageBatchRequestEntry) int {
	if len(entries) == 0 {
		return 0
	}
	res, err := p.sqs.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.queueURL), Entries: entries})
	if err != nil {
		p.onError("sqs delete", "queue", p.event.Source, "err", err)
		return 0
	}
	for _, f := range res.Failed {
		p.onError("sqs delete", "queue", p.event.Source, "message", aws.ToString(f.Id), "err", aws.ToString(f.Message))
	}
	return len(res.Successful)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
