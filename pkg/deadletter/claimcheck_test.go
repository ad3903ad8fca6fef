package deadletter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// payloads is a bucket of fauxqs's S3, a writer of letters' bodies under "dead-letters/" and a
// reader of it.
type payloads struct {
	s3     *s3.Client
	bucket string
	writer *claimcheck.Writer
	reader *claimcheck.Reader
}

func newPayloads(t *testing.T) payloads {
	t.Helper()
	p := payloads{s3: testkit.S3Client(t)}
	p.bucket = testkit.Bucket(t, p.s3, "letters")
	var err error
	if p.writer, err = claimcheck.NewWriter(p.s3, claimcheck.WriterConfig{Bucket: p.bucket, KeyPrefix: "dead-letters/totals/"}); err != nil {
		t.Fatal(err)
	}
	if p.reader, err = claimcheck.NewReader(p.s3, claimcheck.ReaderConfig{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// browseOne returns the one letter in view in the queue.
func browseOne(t *testing.T, c dlq.ReceiveAPI, url string) deadletter.Letter {
	t.Helper()
	var letters []deadletter.Letter
	if err := dlq.Browse(t.Context(), c, url, func(l deadletter.Letter) bool { letters = append(letters, l); return true }); err != nil {
		t.Fatal(err)
	}
	if len(letters) != 1 {
		t.Fatalf("%d letters in view; want 1", len(letters))
	}
	return letters[0]
}

// streamRecord is a 3 MiB Kinesis record as its port hands it to a dead-letter queue: a body
// SQS refuses, a key SQS refuses as a group.
func streamRecord() events.SQSMessage {
	return events.SQSMessage{MessageId: "shardId-000000000000:4960", Body: `{"data":"` + strings.Repeat("QUJD", 3<<20/4) + `"}`,
		EventSourceARN: "arn:aws:kinesis:us-east-1:000000000000:stream/orders",
		Attributes:     map[string]string{"MessageGroupId": "compte é 1", "MessageDeduplicationId": "shardId-000000000000:4960"}}
}

// A letter past SQS's 1 MiB is sent as a claim check: the body an object, the letter its
// pointer in the extended clients' format, with the decoded event and the key as it is.
func TestQueue_a_letter_past_1_MiB_goes_through_the_claim_check(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := newPayloads(t)
	dlqURL := createQueue(t, c, true, nil)
	msg := streamRecord()
	ev := cloudevent.Event{ID: "order-9", Type: "order.placed", Source: "shop", Data: []byte(`{"b":1,"a":2}`)}
	reason := deadletter.WithEvent(errors.New("negative amount"), ev)

	if err := deadletter.New(c, dlqURL).DeadLetter(t.Context(), msg, reason); err == nil {
		t.Fatal("without a claim check a 3 MiB letter was sent; want SQS to refuse it")
	}
	if err := deadletter.New(c, dlqURL).WithClaimCheck(p.writer).DeadLetter(t.Context(), msg, reason); err != nil {
		t.Fatalf("DeadLetter with a claim check: %v", err)
	}
	l := browseOne(t, c, dlqURL)
	if _, _, isPointer, _ := claimcheck.Parse(events.SQSMessage{Body: l.Body}); !isPointer || !l.Offloaded || l.PayloadSize != len(msg.Body) {
		t.Fatalf("letter body %.80q, offloaded %v, size %d; want the pointer to the %d-byte body", l.Body, l.Offloaded, l.PayloadSize, len(msg.Body))
	}
	if l.GroupID != "compte é 1" || l.DecodedEventID != "order-9" || l.Why() != "negative amount" {
		t.Errorf("letter group %q event %q reason %q; want the key as it is, the decoded event and the reason", l.GroupID, l.DecodedEventID, l.Why())
	}
	if l.PayloadHash != ev.PayloadHash() {
		t.Errorf("letter payload hash %q; want the event's %q", l.PayloadHash, ev.PayloadHash())
	}
	if len(l.Attributes) != 0 {
		t.Errorf("letter's own attributes %v; want none (the size attribute is the letter's claim check)", names(l.Attributes))
	}
	resolved, err := l.Resolved(t.Context(), p.reader)
	if err != nil || resolved.Body != msg.Body || resolved.Pointer != l.Body {
		t.Fatalf("Resolved = %d bytes, pointer %q, %v; want the record back and its pointer", len(resolved.Body), resolved.Pointer, err)
	}
}

// A letter a redrive sends back is sent as its source sent it: a body DeadLetter offloaded
// only because of its own attributes goes back inline; one past 1 MiB goes back as a claim
// check a consumer reads.
func TestRedrive_sends_an_offloaded_letter_back_inline_when_it_fits_else_as_a_claim_check(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := newPayloads(t)
	for _, tc := range []struct {
		name    string
		size    int
		pointer bool
	}{{"inline", 1<<20 - 300, false}, {"claim check", 2 << 20, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, dlqURL := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
			msg := deadLettered(queueARN(t, c, src), "acct-1", "evt-big", "account.credited")
			msg.Body = `{"id":"evt-big","pad":"` + strings.Repeat("x", tc.size) + `"}`
			if err := deadletter.New(c, dlqURL).WithClaimCheck(p.writer).DeadLetter(t.Context(), msg, deadletter.WithEventID(errors.New(strings.Repeat("why ", 1000)), "evt-big")); err != nil {
				t.Fatal(err)
			}
			if l := browseOne(t, c, dlqURL); !l.Offloaded {
				t.Fatalf("a %d-byte body with the engine's attributes was not offloaded", len(msg.Body))
			}
			if o := redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL}); o["evt-big"] != dlq.Failed {
				t.Errorf("redrive without a payload reader: %v; want the letter failed, left in place", o)
			}
			if o := redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL, Payloads: p.reader}); o["evt-big"] != dlq.Moved {
				t.Fatalf("redrive: %v; want moved", o)
			}
			got := receiveAll(t, c, src)
			if len(got) != 1 {
				t.Fatalf("source queue holds %d messages; want the letter back", len(got))
			}
			body, _ := claimcheck.NewReader(p.s3, claimcheck.ReaderConfig{})
			m := events.SQSMessage{Body: aws.ToString(got[0].Body), MessageAttributes: map[string]events.SQSMessageAttribute{}}
			for name, v := range got[0].MessageAttributes {
				m.MessageAttributes[name] = events.SQSMessageAttribute{DataType: aws.ToString(v.DataType), StringValue: v.StringValue}
			}
			_, _, isPointer, _ := claimcheck.Parse(m)
			payload, err := body.Payload(t.Context(), m)
			if isPointer != tc.pointer || err != nil || payload != msg.Body {
				t.Errorf("redriven message: pointer %v, payload %d bytes, %v; want pointer %v and the body as dead-lettered", isPointer, len(payload), err, tc.pointer)
			}
			if tc.pointer && aws.ToString(got[0].MessageAttributes[claimcheck.SizeAttribute].DataType) != "Number" {
				t.Errorf("redriven claim check's size attribute %+v; want the extended clients' Number", got[0].MessageAttributes[claimcheck.SizeAttribute])
			}
		})
	}
}

// A key whose characters SQS refuses in a String attribute (a control character) is kept
// exactly, as a Binary attribute: the hold's group and the letter's stay one name.
func TestQueue_keeps_a_key_SQS_refuses_as_text_exactly(t *testing.T) {
	t.Parallel()
	c := client(t)
	dlqURL := createQueue(t, c, true, nil)
	msg := streamRecord()
	msg.Body = `{"small":true}`
	msg.Attributes["MessageGroupId"] = "tab\tbell\x07 é"
	if err := deadletter.New(c, dlqURL).DeadLetter(t.Context(), msg, errors.New("bad")); err != nil {
		t.Fatal(err)
	}
	if l := browseOne(t, c, dlqURL); l.GroupID != "tab\tbell\x07 é" {
		t.Errorf("letter group %q; want the key exactly", l.GroupID)
	}
}

// A stream letter goes to its consumer's replay queue, never to its stream: without one known
// the redrive leaves it, saying so; with one it sends the record as it was dead-lettered, under
// its key's digest as the queue's group, carrying what the replay and a letter SQS would move
// must know: the record's id, the key as it is, the stream, the decoded event and its hashes.
func TestRedrive_sends_a_stream_letter_to_its_replay_queue_with_its_key_and_record(t *testing.T) {
	t.Parallel()
	c := client(t)
	dlqURL, replay := createQueue(t, c, true, nil), createQueue(t, c, true, nil)
	msg := streamRecord()
	msg.Body = `{"small":true}`
	ev := cloudevent.Event{ID: "order-9", Type: "order.placed", Source: "shop", Data: []byte(`{"n":10.0}`)}
	if err := deadletter.New(c, dlqURL).DeadLetter(t.Context(), msg, deadletter.WithEvent(errors.New("bad"), ev)); err != nil {
		t.Fatal(err)
	}
	var got dlq.Redriven
	if err := dlq.Redrive(t.Context(), dlq.RedriveConfig{Client: c, Queue: dlqURL}, func(r dlq.Redriven) { got = r }); err != nil {
		t.Fatal(err)
	}
	if got.Outcome != dlq.Failed || got.Err == nil || !strings.Contains(got.Err.Error(), "replay queue, which is not known") {
		t.Fatalf("redrive of a stream letter without a replay queue: %s, %v; want it left in place, saying its replay queue is not known", got.Outcome, got.Err)
	}
	if o := redrive(t, dlq.RedriveConfig{Client: c, Queue: dlqURL, Replay: replay}); o["order-9"] != dlq.Moved {
		t.Fatalf("redrive with the replay queue: %v; want the letter moved", o)
	}
	sent := receiveAll(t, c, replay)
	if len(sent) != 1 {
		t.Fatalf("replay queue holds %d messages; want the letter", len(sent))
	}
	m := sent[0]
	attr := func(name string) string {
		v := m.MessageAttributes[name]
		if v.StringValue != nil {
			return *v.StringValue
		}
		return string(v.BinaryValue)
	}
	want := map[string]string{deadletter.AttrOriginalMessageID: msg.MessageId, deadletter.AttrSourceGroupID: "compte é 1",
		deadletter.AttrSourceQueueARN: msg.EventSourceARN, deadletter.AttrEventID: "order-9", deadletter.AttrPayloadHash: ev.PayloadHash()}
	for name, v := range want {
		if attr(name) != v {
			t.Errorf("replayed message's %s = %q; want %q", name, attr(name), v)
		}
	}
	if aws.ToString(m.Body) != msg.Body || m.Attributes["MessageGroupId"] != deadletter.GroupID("compte é 1") {
		t.Errorf("replayed message: body %q, group %q; want the record under the key's digest", aws.ToString(m.Body), m.Attributes["MessageGroupId"])
	}
}
