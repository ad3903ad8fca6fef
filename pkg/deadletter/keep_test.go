package deadletter_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"

// withAttributes is a dead-lettered message with n message attributes of its own (one of them
// binary) and an AWSTraceHeader.
func withAttributes(sourceARN string, n int) (events.SQSMessage, map[string]types.MessageAttributeValue) {
	m := deadLettered(sourceARN, "acct-1", fmt.Sprintf("evt-%d-attrs", n), "account.credited")
	m.Attributes["AWSTraceHeader"] = trace
	m.MessageAttributes = map[string]events.SQSMessageAttribute{}
	want := map[string]types.MessageAttributeValue{}
	for i := range n {
		name := fmt.Sprintf("attr%d", i)
		if i == 1 {
			m.MessageAttributes[name] = events.SQSMessageAttribute{DataType: "Binary", BinaryValue: []byte{0, 1, 2, byte(i)}}
			want[name] = types.MessageAttributeValue{DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, byte(i)}}
			continue
		}
		v := fmt.Sprintf("value %d", i)
		m.MessageAttributes[name] = events.SQSMessageAttribute{DataType: "String", StringValue: aws.String(v)}
		want[name] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	return m, want
}

func sameAttributes(got, want map[string]types.MessageAttributeValue) bool {
	return maps.EqualFunc(got, want, func(a, b types.MessageAttributeValue) bool {
		return aws.ToString(a.DataType) == aws.ToString(b.DataType) && aws.ToString(a.StringValue) == aws.ToString(b.StringValue) &&
			string(a.BinaryValue) == string(b.BinaryValue)
	})
}

// sent records the SendMessage requests a client makes, as they leave the SDK.
type sent struct {
	mu  sync.Mutex
	ins []*sqs.SendMessageInput
}

func (s *sent) middleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("sent",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if p, ok := in.Parameters.(*sqs.SendMessageInput); ok {
				s.mu.Lock()
				s.ins = append(s.ins, p)
				s.mu.Unlock()
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

// A letter keeps the message's own attributes and its trace header, within SQS's 10 message
// attributes per message together with the engine's own (beyond them, the message's travel
// in one attribute), and a redrive sends them back as they came. fauxqs accepts
// AWSTraceHeader and stores nothing of it: the header is checked on the request sent.
func TestQueue_a_letter_keeps_the_messages_attributes_and_trace_header(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 3, 4, 10} {
		t.Run(fmt.Sprintf("%d attributes", n), func(t *testing.T) {
			t.Parallel()
			c := client(t)
			var s sent
			watched := sqs.New(c.Options(), sqs.WithAPIOptions(s.middleware))
			src, dlqURL := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
			msg, want := withAttributes(queueARN(t, c, src), n)
			if err := deadletter.New(watched, dlqURL).DeadLetter(t.Context(), msg, errors.New("failed 5 times: downstream")); err != nil {
				t.Fatalf("DeadLetter: %v (SQS takes at most 10 message attributes)", err)
			}
			if len(s.ins) != 1 || aws.ToString(s.ins[0].MessageSystemAttributes["AWSTraceHeader"].StringValue) != trace {
				t.Errorf("the letter was sent without the message's AWSTraceHeader %q", trace)
			}
			if len(s.ins) == 1 && len(s.ins[0].MessageAttributes) > deadletter.MaxMessageAttributes {
				t.Errorf("the letter was sent with %d message attributes; SQS takes %d", len(s.ins[0].MessageAttributes), deadletter.MaxMessageAttributes)
			}
			var letters []deadletter.Letter
			if err := dlq.Browse(t.Context(), c, dlqURL, func(l deadletter.Letter) bool {
				letters = append(letters, l)
				return true
			}); err != nil {
				t.Fatal(err)
			}
			if len(letters) != 1 {
				t.Fatalf("%d letters; want 1", len(letters))
			}
			l := letters[0]
			if !sameAttributes(l.Attributes, want) {
				t.Errorf("letter's attributes %v; want the message's own %v", names(l.Attributes), names(want))
			}
			if l.Reason == "" || l.SourceMessage != msg.MessageId {
				t.Errorf("letter lost the engine's attributes: reason %q, source message %q", l.Reason, l.SourceMessage)
			}

			redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL})
			got := receiveAll(t, c, src)
			if len(got) != 1 {
				t.Fatalf("source queue holds %d messages after the redrive; want 1", len(got))
			}
			attrs := maps.Clone(got[0].MessageAttributes)
			if origin := aws.ToString(attrs[deadletter.AttrOriginalMessageID].StringValue); len(want) < deadletter.MaxMessageAttributes && origin != msg.MessageId {
				t.Errorf("redriven message names %q as the message it was first sent as; want %s", origin, msg.MessageId)
			}
			delete(attrs, deadletter.AttrOriginalMessageID)
			if !sameAttributes(attrs, want) {
				t.Errorf("redriven message's attributes %v; want the original's %v and %s", names(got[0].MessageAttributes), names(want), deadletter.AttrOriginalMessageID)
			}
		})
	}
}

// SendInput is what a redrive sends for a letter: its body, its own attributes and its trace
// header, never the engine's attributes.
func TestLetter_SendInput_restores_the_message(t *testing.T) {
	t.Parallel()
	c := client(t)
	src, dlqURL := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
	msg, want := withAttributes(queueARN(t, c, src), 6)
	if err := deadletter.New(c, dlqURL).DeadLetter(t.Context(), msg, errors.New("bad")); err != nil {
		t.Fatal(err)
	}
	var in *deadletter.Letter
	if err := dlq.Browse(t.Context(), c, dlqURL, func(l deadletter.Letter) bool { in = &l; return false }); err != nil || in == nil {
		t.Fatalf("browse: %v, %v", in, err)
	}
	in.TraceHeader = trace // as SQS returns it; fauxqs drops it
	send := in.SendInput(src)
	if aws.ToString(send.QueueUrl) != src || aws.ToString(send.MessageBody) != msg.Body || aws.ToString(send.MessageGroupId) != "acct-1" {
		t.Errorf("SendInput = queue %s body %s group %s; want %s, the body and acct-1", aws.ToString(send.QueueUrl),
			aws.ToString(send.MessageBody), aws.ToString(send.MessageGroupId), src)
	}
	attrs := maps.Clone(send.MessageAttributes)
	if origin := aws.ToString(attrs[deadletter.AttrOriginalMessageID].StringValue); origin != msg.MessageId {
		t.Errorf("SendInput names %q as the message it was first sent as; want %s", origin, msg.MessageId)
	}
	delete(attrs, deadletter.AttrOriginalMessageID)
	if !sameAttributes(attrs, want) {
		t.Errorf("SendInput's attributes %v; want the message's own %v and %s", names(send.MessageAttributes), names(want), deadletter.AttrOriginalMessageID)
	}
	if h := aws.ToString(send.MessageSystemAttributes["AWSTraceHeader"].StringValue); h != trace {
		t.Errorf("SendInput's AWSTraceHeader %q; want %q", h, trace)
	}
	send.MessageDeduplicationId = aws.String("fresh-" + in.MessageID)
	if _, err := c.SendMessage(t.Context(), send); err != nil {
		t.Errorf("SQS refused SendInput: %v", err)
	}
}

func names(attrs map[string]types.MessageAttributeValue) []string {
	return slices.Sorted(maps.Keys(attrs))
}

// The message's own attributes count toward SQS's size limit with the body: beside large
// ones the reason is cut so that the letter fits a 256 KiB queue.
func TestQueue_fits_the_reason_beside_the_messages_own_attributes(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, true, map[string]string{string(types.QueueAttributeNameMaximumMessageSize): "262144"})
	msg := source("msg-attrs")
	msg.Body = strings.Repeat("x", 200*1024)
	msg.MessageAttributes = map[string]events.SQSMessageAttribute{
		"a": {DataType: "String", StringValue: aws.String(strings.Repeat("a", 27*1024))},
		"b": {DataType: "String", StringValue: aws.String(strings.Repeat("b", 27*1024))},
	}
	if err := deadletter.New(c, url).DeadLetter(t.Context(), msg, errors.New(strings.Repeat("why ", 2500))); err != nil {
		t.Fatalf("DeadLetter: %v; want the reason cut to fit beside the body and the message's attributes", err)
	}
	got := receiveAll(t, c, url)
	if len(got) != 1 {
		t.Fatalf("received %d messages; want 1", len(got))
	}
	if r := attr(got[0], deadletter.AttrReason); len(r) < deadletter.MinReasonBytes || len(r) >= deadletter.MaxReasonBytes {
		t.Errorf("reason is %d bytes; want it cut to fit, at least %d", len(r), deadletter.MinReasonBytes)
	}
	if attr(got[0], "a") != strings.Repeat("a", 27*1024) {
		t.Error("the message's own attribute a was not kept")
	}
}

// An attribute of the message's own with an engine attribute's name is kept, not overwritten:
// the message's attributes then travel packed.
func TestQueue_keeps_an_attribute_named_like_the_engines(t *testing.T) {
	t.Parallel()
	c := client(t)
	url := createQueue(t, c, true, nil)
	msg := source("msg-named")
	msg.MessageAttributes = map[string]events.SQSMessageAttribute{
		deadletter.AttrReason: {DataType: "String", StringValue: aws.String("the producer's own reason")}}
	if err := deadletter.New(c, url).DeadLetter(t.Context(), msg, errors.New("failed 5 times")); err != nil {
		t.Fatal(err)
	}
	var l *deadletter.Letter
	if err := dlq.Browse(t.Context(), c, url, func(got deadletter.Letter) bool { l = &got; return false }); err != nil || l == nil {
		t.Fatalf("browse: %v, %v", l, err)
	}
	if l.Reason != "failed 5 times" || aws.ToString(l.Attributes[deadletter.AttrReason].StringValue) != "the producer's own reason" {
		t.Errorf("reason %q, own attribute %q; want the engine's and the producer's both", l.Reason,
			aws.ToString(l.Attributes[deadletter.AttrReason].StringValue))
	}
}
