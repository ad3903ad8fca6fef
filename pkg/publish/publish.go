package publish

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/xray"
)

// MaxBatch is the most messages one SendMessageBatch call takes.
const MaxBatch = 10

// MaxMessageBytes is the most SQS takes in one message, body and message attributes counted
// together (1 MiB, 1,048,576 bytes; 256 KiB before AWS raised it), and in one SendMessageBatch
// call, all its messages counted together. A queue may be set to take less (its
// MaximumMessageSize attribute); the default is the most.
const MaxMessageBytes = 1 << 20

// maxBatchBytes keeps a batch under the SQS payload limit of a SendMessageBatch call.
const maxBatchBytes = MaxMessageBytes

// ErrNotSent marks a message that was not attempted because an earlier message for the same
// queue failed: sending it would overtake the failed one in its message group.
var ErrNotSent = errors.New("not sent: an earlier message to the queue failed")

// Sender is the part of the SQS client the Publisher uses. Implementations must be safe for
// concurrent use, as *sqs.Client is.
type Sender interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// Message is one FIFO message. DedupID is the stable id of the logical event, GroupID the
// aggregate it concerns. TraceHeader, when set, is sent as the message's AWSTraceHeader system
// attribute (see package xray): X-Ray links the trace of whoever produced the event to the
// consumer's, and the consumer logs it.
type Message struct {
	DedupID     string
	GroupID     string
	Body        string
	TraceHeader string

	attrs map[string]types.MessageAttributeValue // of a claim check (see Config.ClaimCheck)
}

// traceAttribute is the MessageSystemAttributes of a message with trace header h, nil without.
func traceAttribute(h string) map[string]types.MessageSystemAttributeValue {
	if h == "" {
		return nil
	}
	return map[string]types.MessageSystemAttributeValue{
		xray.SQSAttribute: {DataType: aws.String("String"), StringValue: aws.String(h)}}
}

// MessageFor encodes ev as a CloudEvents JSON body keyed by its id and subject.
func MessageFor(ev cloudevent.Event) (Message, error) {
	if ev.ID == "" || ev.Subject == "" {
		return Message{}, fmt.Errorf("publish %s: event id and subject are required", ev.Type)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		return Message{}, err
	}
	return Message{DedupID: ev.ID, GroupID: ev.Subject, Body: string(body)}, nil
}

// Config tunes a Publisher. The zero value works.
type Config struct {
	// Attempts is how many times a message is sent before its failure is returned; default 3.
	// The SDK's own retries happen inside each attempt.
	Attempts int
	// Backoff is the base of the SDK's exponential backoff with full jitter (aws/retry, as its
	// standard retryer waits): the wait before attempt n+1 is random in [0, min(Backoff·2^(n-1),
	// 20s)), and a throttling error uses a base of 1s. Default 100ms.
	Backoff time.Duration
	// ClaimCheck, when set, carries a message larger than Threshold through S3: it stores the
	// body (a *claimcheck.Writer does) and the message sent is a pointer to it, in the format of
	// AWS's SQS extended client libraries. The object is written before the pointer is sent.
	// Without it, a message past SQS's limit is refused by SQS.
	ClaimCheck Offloader
	// Threshold is the size of a message (body and message attributes) past which it goes
	// through ClaimCheck. Default and most MaxMessageBytes; set only with ClaimCheck.
	Threshold int
}

// Offloader stores a message body too large to send and returns the message that points to
// it: its body and message attributes. *claimcheck.Writer implements it. Implementations must
// be safe for concurrent use.
type Offloader interface {
	OffloadMessage(ctx context.Context, body string) (string, map[string]types.MessageAttributeValue, error)
}

// Publisher sends messages with their stable deduplication id, retrying failed sends with the
// same id. It is safe for concurrent use.
type Publisher struct {
	client  Sender
	cfg     Config
	backoff aws.Retryer // only its RetryDelay: the attempts are the Publisher's own
}

// New returns a Publisher over client.
func New(client Sender, cfg Config) (*Publisher, error) {
	if cfg.Attempts == 0 {
		cfg.Attempts = 3
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 100 * time.Millisecond
	}
	var errs []error
	if client == nil {
		errs = append(errs, errors.New("publish: client is required"))
	}
	if cfg.Attempts < 0 || cfg.Backoff < 0 {
		errs = append(errs, errors.New("publish: attempts and backoff must not be negative"))
	}
	if cfg.Threshold < 0 || cfg.Threshold > MaxMessageBytes || cfg.Threshold != 0 && cfg.ClaimCheck == nil {
		errs = append(errs, fmt.Errorf("publish: Threshold is %d; want 1 to %d, with a ClaimCheck (0 means %[2]d)",
			cfg.Threshold, MaxMessageBytes))
	}
	if cfg.Threshold == 0 {
		cfg.Threshold = MaxMessageBytes
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	backoff := retry.NewStandard(func(o *retry.StandardOptions) { o.BaseDelay = cfg.Backoff })
	return &Publisher{client: client, cfg: cfg, backoff: backoff}, nil
}

// Publish sends the events to queueURL in order, in batches, and returns every failure joined.
func (p *Publisher) Publish(ctx context.Context, queueURL string, evs ...cloudevent.Event) error {
	msgs := make([]Message, 0, len(evs))
	for _, ev := range evs {
		m, err := MessageFor(ev)
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	return errors.Join(p.SendBatch(ctx, queueURL, msgs)...)
}

// Send sends one message, retrying with the same deduplication id.
func (p *Publisher) Send(ctx context.Context, queueURL string, m Message) error {
	m, err := p.offload(ctx, m)
	if err != nil {
		return fmt.Errorf("send %s to %s: %w", m.DedupID, queueURL, err)
	}
	in := &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(m.Body),
		MessageDeduplicationId: aws.String(m.DedupID), MessageGroupId: aws.String(m.GroupID),
		MessageSystemAttributes: traceAttribute(m.TraceHeader), MessageAttributes: m.attrs}
	for attempt := range p.cfg.Attempts {
		if werr := p.wait(ctx, attempt, err); werr != nil {
			err = werr
			break
		}
		if _, err = p.client.SendMessage(ctx, in); err == nil {
			return nil
		}
	}
	return fmt.Errorf("send %s to %s: %w", m.DedupID, queueURL, err)
}

// SendBatch sends msgs to queueURL in order, in SendMessageBatch calls of at most MaxBatch,
// retrying the entries SQS failed for reasons other than the sender's fault. It returns one
// error per message, nil for those sent. After a batch with a failure it stops, and the later
// messages get ErrNotSent, so no message overtakes a failed one of its group. A message that
// goes through Config.ClaimCheck and could not be stored is such a failure.
func (p *Publisher) SendBatch(ctx context.Context, queueURL string, msgs []Message) []error {
	errs := make([]error, len(msgs))
	ready := p.offloadAll(ctx, queueURL, msgs, errs)
	sent := 0
	for sent < len(ready) {
		end := chunkEnd(ready, sent)
		failed := p.sendChunk(ctx, queueURL, ready[sent:end], errs[sent:end])
		sent = end
		if failed {
			break
		}
	}
	for i := sent; i < len(msgs); i++ {
		if errs[i] == nil {
			errs[i] = ErrNotSent
		}
	}
	return errs
}

// chunkEnd returns the end of the batch starting at start: at most MaxBatch messages within
// the size limit, and at most one message per group. SQS can fail one entry of a batch and
// accept a later one, so a batch holding two messages of one group could let the second
// overtake the first; across batches, SendBatch stops at the first failure.
func chunkEnd(msgs []Message, start int) int {
	end, size := start, 0
	groups := map[string]bool{}
	for end < len(msgs) && end-start < MaxBatch {
		size += msgs[end].size()
		g := msgs[end].GroupID
		if end > start && (size > maxBatchBytes || g != "" && groups[g]) {
			break
		}
		groups[g] = true
		end++
	}
	return end
}

// sendChunk sends one batch, retrying its retryable failures; errs receives the final results.
func (p *Publisher) sendChunk(ctx context.Context, queueURL string, msgs []Message, errs []error) (failed bool) {
	pending := make([]int, len(msgs))
	for i := range pending {
		pending[i] = i
	}
	var last error // of the call before, for the backoff (nil when SQS failed some entries)
	for attempt := 0; attempt < p.cfg.Attempts && len(pending) > 0; attempt++ {
		if err := p.wait(ctx, attempt, last); err != nil {
			for _, i := range pending {
				errs[i] = fmt.Errorf("send %s: %w", msgs[i].DedupID, err)
			}
			return true
		}
		entries := make([]types.SendMessageBatchRequestEntry, len(pending))
		for n, i := range pending {
			entries[n] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)),
				MessageBody: aws.String(msgs[i].Body), MessageDeduplicationId: aws.String(msgs[i].DedupID),
				MessageGroupId: aws.String(msgs[i].GroupID), MessageSystemAttributes: traceAttribute(msgs[i].TraceHeader),
				MessageAttributes: msgs[i].attrs}
		}
		out, err := p.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL), Entries: entries})
		last = err
		if err != nil {
			for _, i := range pending {
				errs[i] = fmt.Errorf("send %s to %s: %w", msgs[i].DedupID, queueURL, err)
			}
			continue
		}
		pending = p.retryable(out, msgs, errs, pending)
	}
	for _, err := range errs {
		if err != nil {
			return true
		}
	}
	return false
}

// retryable records the batch result in errs and returns the entries worth another attempt.
func (p *Publisher) retryable(out *sqs.SendMessageBatchOutput, msgs []Message, errs []error, pending []int) []int {
	for _, i := range pending {
		errs[i] = nil
	}
	var again []int
	for _, f := range out.Failed {
		i, err := strconv.Atoi(aws.ToString(f.Id))
		if err != nil || i < 0 || i >= len(msgs) {
			continue
		}
		errs[i] = fmt.Errorf("send %s: %s: %s", msgs[i].DedupID, aws.ToString(f.Code), aws.ToString(f.Message))
		if !f.SenderFault {
			again = append(again, i)
		}
	}
	return again
}

// wait sleeps before attempt (0 is the first, which does not wait) after the error of the
// one before, for the SDK's jittered backoff.
func (p *Publisher) wait(ctx context.Context, attempt int, last error) error {
	if attempt == 0 {
		return ctx.Err()
	}
	d, err := p.backoff.RetryDelay(attempt, last)
	if err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
