package sqsbatch

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/xray"
)

// Processor runs a MessageHandler over the messages of SQS events. It is safe for concurrent
// use; build it once at init and pass Handle to lambda.Start.
type Processor struct {
	runner *batch.Runner
	cfg    Config
	handle func(ctx context.Context, s *batch.Session, msg events.SQSMessage) error
	app    *batch.Applier // nil for New: no engine
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
	return &Processor{runner: r, cfg: cfg, handle: handle, app: app}, nil
}

// Handle is the Lambda handler. It never returns an error and never panics: every message it
// did not acknowledge is listed in BatchItemFailures, in batch order, and SQS redelivers it.
func (p *Processor) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	defer p.runner.Flush(ctx)
	items := itemsOf(ev.Records)
	w := batch.Work{Items: items, Handle: nil}
	var s *batch.Session
	if p.app != nil {
		w.Workers = p.runner.Workers(len(batch.Groups(items)), p.app.Least())
		s = p.app.Begin(w.Workers)
		w.Done = func() { s.Leave(ctx) }
	}
	w.Handle = func(ctx context.Context, i int) error { return p.handle(ctx, s, ev.Records[i]) }
	if p.cfg.DeadLetter != nil {
		w.DeadLetter = func(ctx context.Context, i int, reason error) error {
			return p.cfg.DeadLetter.DeadLetter(ctx, ev.Records[i], reason)
		}
	}
	out := p.runner.Run(ctx, w)

	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for i, o := range out {
		if o != batch.Acked {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	return resp, nil
}

// itemsOf maps messages to the batch core's items. A FIFO batch (a ".fifo" source ARN or any
// MessageGroupId attribute) groups by MessageGroupId; a message of it without a group id,
// and every message of a standard queue, is a group alone.
func itemsOf(recs []events.SQSMessage) []batch.Item {
	fifo := false
	for _, m := range recs {
		if strings.HasSuffix(m.EventSourceARN, ".fifo") || m.Attributes["MessageGroupId"] != "" {
			fifo = true
			break
		}
	}
	items := make([]batch.Item, len(recs))
	for i, m := range recs {
		items[i] = batch.Item{ID: m.MessageId, Trace: m.Attributes[xray.SQSAttribute]}
		if fifo {
			items[i].Group = m.Attributes["MessageGroupId"]
		}
	}
	return items
}
