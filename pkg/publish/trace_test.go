package publish_test

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/publish"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// recording passes every send on to the real client and keeps the trace attribute of each
// entry, by deduplication id: fauxqs accepts MessageSystemAttributes but does not store them.
type recording struct {
	*sqs.Client
	mu     sync.Mutex
	traces map[string]string
}

func (r *recording) keep(dedup *string, attrs map[string]types.MessageSystemAttributeValue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.traces[aws.ToString(dedup)] = aws.ToString(attrs["AWSTraceHeader"].StringValue)
}

func (r *recording) SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	r.keep(in.MessageDeduplicationId, in.MessageSystemAttributes)
	return r.Client.SendMessage(ctx, in, opts...)
}

func (r *recording) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	for _, e := range in.Entries {
		r.keep(e.MessageDeduplicationId, e.MessageSystemAttributes)
	}
	return r.Client.SendMessageBatch(ctx, in, opts...)
}

func TestPublisher_sends_each_messages_trace_header_as_its_AWSTraceHeader(t *testing.T) {
	t.Parallel()
	client := testkit.SQS(t)
	url := testkit.CreateFIFOQueue(t, client, "trace")
	rec := &recording{Client: client, traces: map[string]string{}}
	p, err := publish.New(rec, publish.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const h1, h2 = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1", "Root=1-5759e989-000000000000000000000002;Sampled=1"
	errs := p.SendBatch(context.Background(), url, []publish.Message{
		{DedupID: "e1", GroupID: "g1", Body: "{}", TraceHeader: h1},
		{DedupID: "e2", GroupID: "g2", Body: "{}"},
	})
	if err := p.Send(context.Background(), url, publish.Message{DedupID: "e3", GroupID: "g3", Body: "{}", TraceHeader: h2}); err != nil {
		errs = append(errs, err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"e1": h1, "e2": "", "e3": h2}
	for id, h := range want {
		if rec.traces[id] != h {
			t.Errorf("message %s sent with AWSTraceHeader %q, want %q", id, rec.traces[id], h)
		}
	}
	if n := len(testkit.Drain(t, client, url)); n != 3 {
		t.Errorf("the queue got %d messages, want 3: SQS must accept the attribute", n)
	}
}
