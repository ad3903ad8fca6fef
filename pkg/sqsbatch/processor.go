package sqsbatch

import (
	"context"
	"errors"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/xray"
)

// Processor runs a MessageHandler over the messages of SQS events. It is safe for concurrent
// use; build it once at init and pass Handle to lambda.Start.
type Processor struct {
	port *batch.Port[events.SQSMessage]
}

// New returns a Processor calling h for each message, configured by cfg.
func New(h MessageHandler, cfg Config) (*Processor, error) {
	if h == nil {
		return nil, errors.Join(errors.New("sqsbatch: MessageHandler is nil"), cfg.Validate())
	}
	return newProcessor(func(ctx context.Context, _ *batch.Session, msg events.SQSMessage) error {
		return h.HandleMessage(ctx, msg)
	}, nil, cfg)
}

func newProcessor(handle func(context.Context, *batch.Session, events.SQSMessage) error, app *batch.Applier, cfg Config) (*Processor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	r, err := batch.New(batch.Config{Concurrency: cfg.Concurrency, DeadlineMargin: cfg.DeadlineMargin,
		Logger: cfg.Logger, Metrics: cfg.Metrics})
	if err != nil {
		return nil, err
	}
	pc := batch.PortConfig[events.SQSMessage]{Runner: r, Applier: app, Item: item, Handle: handle}
	if cfg.DeadLetter != nil {
		pc.DeadLetter = cfg.DeadLetter.DeadLetter
	}
	port, err := batch.NewPort(pc)
	if err != nil {
		return nil, err
	}
	return &Processor{port: port}, nil
}

// Handle is the Lambda handler. It never returns an error and never panics: every message it
// did not acknowledge is listed in BatchItemFailures, in batch order, and SQS redelivers it.
func (p *Processor) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	out := p.port.Run(ctx, ev.Records)
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
func item(m events.SQSMessage) batch.Item {
	return batch.Item{ID: m.MessageId, Group: m.Attributes["MessageGroupId"], Trace: m.Attributes[xray.SQSAttribute]}
}
