package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/deadletter"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/xray"
)

// ReplayConfig tunes the replay path of a stream port. The zero value works.
type ReplayConfig struct {
	// Payloads reads a replayed letter's record that came as a claim check (a record past
	// SQS's 1 MiB, in the payload bucket). Nil: such a message is dead-lettered again, its
	// reason saying so.
	Payloads claimcheck.PayloadReader
	// MaxReceiveCount is the replay queue's redrive policy maxReceiveCount (0: none, or
	// unknown). When set, a consumer that holds groups holds a message's key, naming its
	// record, before handling it on its last BackstopReceives receives (Backstop), so that a
	// replay the queue moves by itself (every invocation crashed) still holds its key.
	MaxReceiveCount int
}

// Replay is the replay path of a stream port: the messages of the consumer's replay queue (an
// SQS FIFO queue the same function consumes), each a dead letter of the stream's that an
// operator redrove (onceflow dlq redrive), its body the record's JSON as the port dead-lettered
// it (deadletter.Letter.ReplayInput). Each record is decoded by the port's own decoder and
// applied through the engine as if the stream delivered it again, so its event id, payload
// hash and key are the ones the hold and the letter know: its group is the record's key
// (never the queue's MessageGroupId, which is the key's digest where SQS refuses the key), and
// its delivery's Origin is the record's id, which the key's held list names. A record that
// fails for good is dead-lettered again as the stream port's letters are, under its key. It is
// safe for concurrent use.
type Replay[R any] struct {
	port *Port[*replayed[R]]
	e    port.Engine
	s    Stream[R]
	cfg  ReplayConfig
	// margin is the runner's DeadlineMargin: a claim check's read ends a quarter of it before
	// the deadline, so that the batch still answers in time.
	margin time.Duration
}

// replayed is one message of a replay batch: the message, whether the backstop held its key,
// and its record once decoded.
type replayed[R any] struct {
	msg     events.SQSMessage
	held    bool
	rec     R
	decoded bool
}

// newReplay returns the replay path of the stream port s of e (newStream's arguments).
func newReplay[R any](e port.Engine, cfg Options, rc ReplayConfig, s Stream[R]) (*Replay[R], error) {
	if e == nil {
		return nil, fmt.Errorf("%s: the port.Engine is nil", s.Name)
	}
	if s.Item == nil || s.Delivery == nil || s.Decode == nil || s.Message == nil {
		return nil, errors.New("batch: a Stream needs Item, Delivery, Decode and Message")
	}
	if rc.MaxReceiveCount < 0 || rc.MaxReceiveCount > 0 && rc.MaxReceiveCount <= BackstopReceives {
		return nil, fmt.Errorf("%s config: the replay queue's MaxReceiveCount is %d; want its maxReceiveCount, above %d, or 0 when it has none",
			s.Name, rc.MaxReceiveCount, BackstopReceives)
	}
	if err := cfg.Rules().Validate(); err != nil {
		return nil, fmt.Errorf("%s config: %w", s.Name, err)
	}
	r, err := New(Config{Concurrency: cfg.Concurrency, DeadlineMargin: cfg.DeadlineMargin, Logger: e.Logger(), Metrics: e.Metrics()})
	if err != nil {
		return nil, fmt.Errorf("%s config: %w", s.Name, err)
	}
	rp := &Replay[R]{e: e, s: s, cfg: rc, margin: r.cfg.DeadlineMargin}
	pc := PortConfig[*replayed[R]]{Runner: r, Engine: e, Rules: cfg.Rules(), Item: replayItem[R], Handle: rp.handle}
	if dl := cfg.DeadLetter; dl != nil {
		pc.DeadLetter = func(ctx context.Context, m *replayed[R], reason error) error {
			return dl.DeadLetter(ctx, rp.letter(m), reason)
		}
	}
	if rp.port, err = NewPort(pc); err != nil {
		return nil, err
	}
	return rp, nil
}

// Handle runs the messages of one SQS event of the replay queue (the event source mapping's
// FunctionResponseTypes must include ReportBatchItemFailures). It never returns an error and
// never panics: every message not done with is in BatchItemFailures, in batch order (a FIFO
// queue's later messages of its group with it), and SQS delivers it again.
func (rp *Replay[R]) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	msgs := make([]*replayed[R], len(ev.Records))
	queued := make([]Queued, len(ev.Records))
	for i, m := range ev.Records {
		msgs[i] = &replayed[R]{msg: m}
		queued[i] = rp.queued(m)
	}
	for i := range Backstop(ctx, rp.e, rp.cfg.MaxReceiveCount, queued) {
		msgs[i].held = true
	}
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for i, o := range rp.port.Run(ctx, msgs) {
		if o != Acked {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	return resp, nil
}

// replayItem is what the batch core sees of a replayed message: its queue's group (one per
// key), for the order within a batch.
func replayItem[R any](m *replayed[R]) Item {
	return Item{ID: m.msg.MessageId, Group: m.msg.Attributes["MessageGroupId"], Trace: m.msg.Attributes[xray.SQSAttribute]}
}

// handle reads the message's record (through the claim check when it is one), decodes it as
// the stream's, and applies it as delivered again by the stream, its Origin the record's id.
func (rp *Replay[R]) handle(ctx context.Context, b port.Batch, m *replayed[R]) error {
	received, _ := strconv.Atoi(m.msg.Attributes["ApproximateReceiveCount"])
	d := port.Delivery{MessageID: m.msg.MessageId, ReceiveCount: received, Group: rp.queued(m.msg).Group,
		Origin: originOf(m.msg), HoldWritten: m.held, Body: m.msg.Body}
	body, err := rp.body(ctx, m.msg)
	if err != nil {
		return b.Fail(ctx, d, cloudevent.Event{}, err)
	}
	if err := json.Unmarshal([]byte(body), &m.rec); err != nil || rp.s.Item(m.rec).ID == "" {
		err = idempotency.Permanent(fmt.Errorf("replayed message %s is not a %s record: %v", m.msg.MessageId, rp.s.Name, errOr(err, "it has no id")))
		malformed(ctx, rp.e, m.msg.MessageId, err)
		return b.Fail(ctx, d, cloudevent.Event{}, err)
	}
	m.decoded = true
	sd := rp.s.Delivery(m.rec)
	// The hold knows the record by the id the stream delivered it as (its held entry's), and
	// the engine takes a delivery with an Origin for a redrive: its record read first, its
	// held entry recognised rather than held behind again.
	d.SequenceNumber, d.Group, d.Origin = sd.SequenceNumber, sd.Group, sd.MessageID
	return rp.s.apply(ctx, rp.e, b, m.rec, d)
}

// body is the message's record JSON: its body, or the payload its claim check points to.
func (rp *Replay[R]) body(ctx context.Context, msg events.SQSMessage) (string, error) {
	if _, _, pointer, _ := claimcheck.Parse(msg); !pointer {
		return msg.Body, nil
	}
	if rp.cfg.Payloads == nil {
		return "", idempotency.Permanent(fmt.Errorf("replayed message %s is a claim check and the port reads none (ReplayConfig.Payloads)", msg.MessageId))
	}
	readCtx, cancel := EndBefore(ctx, rp.margin/4)
	defer cancel()
	body, err := rp.cfg.Payloads.Payload(readCtx, msg)
	if err != nil {
		return "", fmt.Errorf("replayed message %s: %w", msg.MessageId, err)
	}
	return body, nil
}

// queued is what the backstop knows of a replayed message before reading it: its key and its
// record's id, as the redrive wrote them (deadletter.AttrSourceGroupID,
// deadletter.AttrOriginalMessageID), else as an inline body shows them; no group when neither
// says (a claim check sent by hand), which the backstop then does not hold.
func (rp *Replay[R]) queued(msg events.SQSMessage) Queued {
	n, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	q := Queued{MessageID: msg.MessageId, ReceiveCount: n, Group: text(msg.MessageAttributes[deadletter.AttrSourceGroupID]), OriginID: originOf(msg)}
	if q.Group != "" && q.OriginID != "" {
		return q
	}
	var rec R
	if _, _, pointer, _ := claimcheck.Parse(msg); !pointer && json.Unmarshal([]byte(msg.Body), &rec) == nil && rp.s.Item(rec).ID != "" {
		it := rp.s.Item(rec)
		q.Group, q.OriginID = it.Group, it.ID
	}
	return q
}

// letter is the stream's letter of a replayed record that failed for good, as the stream port
// dead-letters it (Stream.Message: under its key, from its stream), with the replay's message
// id, so that the record replayed and failing again within SQS's five-minute deduplication
// window is a new letter, and the record's id as AttrOriginalMessageID, which its held entry
// names. A message whose record could not be read is dead-lettered as it came, under its key.
func (rp *Replay[R]) letter(m *replayed[R]) events.SQSMessage {
	if !m.decoded {
		msg := m.msg
		msg.Attributes = map[string]string{"MessageGroupId": rp.queued(m.msg).Group, "ApproximateReceiveCount": m.msg.Attributes["ApproximateReceiveCount"]}
		msg.MessageAttributes = deadletter.OwnAttributes(m.msg.MessageAttributes)
		return msg
	}
	msg := rp.s.Message(m.rec)
	id := rp.s.Item(m.rec).ID
	msg.MessageId = m.msg.MessageId
	msg.Attributes["ApproximateReceiveCount"] = m.msg.Attributes["ApproximateReceiveCount"]
	if h := m.msg.Attributes[xray.SQSAttribute]; h != "" {
		msg.Attributes[xray.SQSAttribute] = h
	}
	s := id
	msg.MessageAttributes = map[string]events.SQSMessageAttribute{deadletter.AttrOriginalMessageID: {DataType: "String", StringValue: &s}}
	return msg
}

// originOf is the id the message was first sent as (deadletter.AttrOriginalMessageID), "" when
// it carries none.
func originOf(msg events.SQSMessage) string {
	if v := msg.MessageAttributes[deadletter.AttrOriginalMessageID].StringValue; v != nil {
		return *v
	}
	return ""
}

// text is a String attribute's value, or a Binary one's bytes (deadletter writes a key SQS
// refuses as Binary).
func text(a events.SQSMessageAttribute) string {
	if a.StringValue != nil {
		return *a.StringValue
	}
	return string(a.BinaryValue)
}

func errOr(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}
