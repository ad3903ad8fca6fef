package sqsbatch

import (
	"context"
	"errors"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/port"
	"github.com/onceflow/onceflow/pkg/xray"
)

// Processor runs a MessageHandler over the messages of SQS events. It is safe for concurrent
// use; build it once at init and pass Handle to lambda.Start.
type Processor struct {
	port *batch.Port[record]
	// held, when set, holds the groups of a batch's messages on their last receives before
	// the batch runs, and reports which messages it held (NewFor's backstop).
	held func(ctx context.Context, recs []events.SQSMessage) map[int]bool
}

// record is a message of one batch, and whether the backstop held its group naming it.
type record struct {
	msg  events.SQSMessage
	held bool
}

// New returns a Processor calling h for each message, configured by cfg.
func New(h MessageHandler, cfg HandlerConfig) (*Processor, error) {
	if h == nil {
		return nil, errors.Join(errors.New("sqsbatch: MessageHandler is nil"), cfg.Validate())
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newProcessor(func(ctx context.Context, _ port.Batch, r record) error {
		return h.HandleMessage(ctx, r.msg)
	}, nil, port.Rules{}, cfg.settings())
}

func newProcessor(handle func(context.Context, port.Batch, record) error, e port.Engine, rules port.Rules, s settings) (*Processor, error) {
	r, err := batch.New(batch.Config{Concurrency: s.concurrency, DeadlineMargin: s.margin,
		Logger: s.logger, Metrics: s.metrics})
	if err != nil {
		return nil, err
	}
	pc := batch.PortConfig[record]{Runner: r, Engine: e, Rules: rules, Item: item, Handle: handle}
	if dl := s.deadLetter; dl != nil {
		pc.DeadLetter = func(ctx context.Context, r record, reason error) error { return dl.DeadLetter(ctx, r.msg, reason) }
	}
	port, err := batch.NewPort(pc)
	if err != nil {
		return nil, err
	}
	return &Processor{port: port}, nil
}

// Handle is the Lambda handler. Its error is always nil and it never panics: a failure is a
// message's, never the batch's, so every message it did not acknowledge is listed in the
// response's BatchItemFailures, in batch order, and SQS redelivers it.
func (p *Processor) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	recs := make([]record, len(ev.Records))
	var held map[int]bool
	if p.held != nil {
		held = p.held(ctx, ev.Records)
	}
	for i, m := range ev.Records {
		recs[i] = record{msg: m, held: held[i]}
	}
	out := p.port.Run(ctx, recs)
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for i, o := range out {
		if o != batch.Acked {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	return resp, nil
}

// item is what the batch core sees of a message: a FIFO message runs in its MessageGroupId's
// order; a message without one (every message of a standard queue) is a group alone.
func item(r record) batch.Item {
	m := r.msg
	return batch.Item{ID: m.MessageId, Group: m.Attributes["MessageGroupId"], Trace: m.Attributes[xray.SQSAttribute]}
}
