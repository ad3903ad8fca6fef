package publish

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// size is what SQS counts of m toward its limit: the body and the message attributes (names,
// types and values). System attributes such as AWSTraceHeader do not count.
func (m Message) size() int {
	n := len(m.Body)
	for name, a := range m.attrs {
		n += len(name) + len(aws.ToString(a.DataType)) + len(aws.ToString(a.StringValue)) + len(a.BinaryValue)
	}
	return n
}

// offload returns m, or, when it is larger than Config.Threshold and a ClaimCheck is set, the
// message that points to its body, stored first.
func (p *Publisher) offload(ctx context.Context, m Message) (Message, error) {
	if p.cfg.ClaimCheck == nil || m.size() <= p.cfg.Threshold {
		return m, nil
	}
	body, attrs, err := p.cfg.ClaimCheck.OffloadMessage(ctx, m.Body)
	if err != nil {
		return m, fmt.Errorf("claim check of %d bytes: %w", m.size(), err)
	}
	m.Body, m.attrs = body, attrs
	return m, nil
}

// offloadAll offloads msgs in order and returns them ready to send, up to the first that could
// not be stored, whose error it sets in errs.
func (p *Publisher) offloadAll(ctx context.Context, queueURL string, msgs []Message, errs []error) []Message {
	if p.cfg.ClaimCheck == nil {
		return msgs
	}
	ready := make([]Message, 0, len(msgs))
	for i, m := range msgs {
		m, err := p.offload(ctx, m)
		if err != nil {
			errs[i] = fmt.Errorf("send %s to %s: %w", m.DedupID, queueURL, err)
			return ready
		}
		ready = append(ready, m)
	}
	return ready
}
