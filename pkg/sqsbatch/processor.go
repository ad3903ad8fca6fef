package sqsbatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/xray"
)

// Processor runs a MessageHandler over the messages of SQS events. It is safe for concurrent
// use; build it once at init and pass Handle to lambda.Start.
type Processor struct {
	handler MessageHandler
	cfg     Config
	log     *slog.Logger
}

// New returns a Processor calling h for each message, configured by cfg.
func New(h MessageHandler, cfg Config) (*Processor, error) {
	var errs []error
	if h == nil {
		errs = append(errs, errors.New("sqsbatch: MessageHandler is nil"))
	}
	errs = append(errs, cfg.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Processor{handler: h, cfg: cfg, log: cfg.Logger}, nil
}

// outcome is what became of one message. The zero value, notStarted, is reported as a
// failure: a message nobody decided on is never acknowledged.
type outcome uint8

const (
	notStarted outcome = iota // deadline guard, or never reached
	acked                     // handled, or dead-lettered
	failed                    // handler failed; SQS redelivers it
	skipped                   // an earlier message of its group failed
)

// group is a run of messages handled in order: a FIFO message group, or one message.
type group struct {
	id      string
	indices []int // into the event's records, in batch order
}

// Handle is the Lambda handler. Its error is always nil and it never panics: a failure is a
// message's, never the batch's, so every message it did not acknowledge is listed in the
// response's BatchItemFailures, in batch order, and SQS redelivers it.
func (p *Processor) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	defer p.flushMetrics(ctx)
	outcomes := make([]outcome, len(ev.Records))
	p.run(ctx, ev.Records, groupsOf(ev.Records), outcomes)

	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	var notStartedIDs []string
	for i, o := range outcomes {
		if o == acked {
			continue
		}
		id := ev.Records[i].MessageId
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
		if o == notStarted {
			notStartedIDs = append(notStartedIDs, id)
		}
	}
	if len(notStartedIDs) > 0 {
		p.log.LogAttrs(ctx, slog.LevelWarn, "messages not started, reported failed",
			slog.Int("count", len(notStartedIDs)), slog.Any("messageIds", notStartedIDs),
			slog.String("reason", p.notStartedReason(ctx)))
	}
	return resp, nil
}

// run hands the groups, in batch order, to at most Concurrency workers.
func (p *Processor) run(ctx context.Context, recs []events.SQSMessage, groups []group, out []outcome) {
	queue := make(chan group)
	var wg sync.WaitGroup
	workers := p.workers(len(groups))
	ctx, leave := p.packing(ctx, workers) // pack.go: commits shared by the workers
	for range workers {
		wg.Go(func() {
			defer leave()
			for g := range queue {
				p.runGroup(ctx, recs, g, out)
			}
		})
	}
	for _, g := range groups {
		queue <- g
	}
	close(queue)
	wg.Wait()
}

// runGroup handles the messages of g in order and stops at the first failure or when the
// deadline guard says so. Each worker writes only its own group's outcomes.
func (p *Processor) runGroup(ctx context.Context, recs []events.SQSMessage, g group, out []outcome) {
	for n, i := range g.indices {
		if !p.mayStart(ctx) {
			return // this and the rest of the group stay notStarted
		}
		if p.process(ctx, recs[i], g.id) {
			out[i] = acked
			continue
		}
		out[i] = failed
		rest := g.indices[n+1:]
		for _, j := range rest {
			out[j] = skipped
		}
		if len(rest) > 0 {
			p.log.LogAttrs(ctx, slog.LevelWarn, "rest of message group skipped, reported failed",
				slog.String("messageId", recs[i].MessageId), slog.String("group", g.id),
				slog.Int("count", len(rest)), slog.String("reason", "an earlier message of the group failed"))
		}
		return
	}
}

// mayStart is the deadline guard: no new message once ctx is done or its deadline is nearer
// than DeadlineMargin.
func (p *Processor) mayStart(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	dl, ok := ctx.Deadline()
	return !ok || time.Until(dl) >= p.cfg.DeadlineMargin
}

func (p *Processor) notStartedReason(ctx context.Context) string {
	if err := ctx.Err(); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("invocation deadline nearer than DeadlineMargin %s", p.cfg.DeadlineMargin)
}

// process handles one message and reports whether it may be acknowledged. It logs the
// decision for every message that is not a plain success. The message's AWSTraceHeader, when
// it has one, is the trace of everything logged about it.
func (p *Processor) process(ctx context.Context, msg events.SQSMessage, groupID string) bool {
	ctx = xray.NewContext(ctx, msg.Attributes[xray.SQSAttribute]) // the trace of who sent the event
	attrs := func(reason error) []slog.Attr {
		return []slog.Attr{slog.String("messageId", msg.MessageId), slog.String("group", groupID),
			slog.String("reason", reason.Error())}
	}
	err := p.protect(ctx, msg, groupID, func() error { return p.handler.HandleMessage(ctx, msg) })
	if err == nil {
		return true
	}
	if !idempotency.IsPermanent(err) {
		p.log.LogAttrs(ctx, slog.LevelError, "message failed, reported for redelivery", attrs(err)...)
		return false
	}
	if p.cfg.DeadLetter == nil {
		p.log.LogAttrs(ctx, slog.LevelError,
			"message failed permanently, reported failed for the queue's redrive policy", attrs(err)...)
		return false
	}
	dlErr := p.protect(ctx, msg, groupID, func() error { return p.cfg.DeadLetter.DeadLetter(ctx, msg, err) })
	if dlErr != nil {
		p.log.LogAttrs(ctx, slog.LevelError,
			"message failed permanently and dead-lettering failed, reported for redelivery",
			attrs(errors.Join(err, dlErr))...)
		return false
	}
	p.cfg.Metrics.Count(metrics.DeadLettered, 1)
	p.log.LogAttrs(ctx, slog.LevelError, "message failed permanently, dead-lettered and acknowledged", attrs(err)...)
	return true
}

// protect runs f, turning a panic into an error after logging it with its stack.
func (p *Processor) protect(ctx context.Context, msg events.SQSMessage, groupID string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
			p.log.LogAttrs(ctx, slog.LevelError, "panic recovered",
				slog.String("messageId", msg.MessageId), slog.String("group", groupID),
				slog.String("reason", err.Error()), slog.String("stack", string(debug.Stack())))
		}
	}()
	return f()
}

func (p *Processor) flushMetrics(ctx context.Context) {
	if err := metrics.Flush(p.cfg.Metrics); err != nil {
		p.log.LogAttrs(ctx, slog.LevelWarn, "metrics not flushed", slog.String("reason", err.Error()))
	}
}

// groupsOf splits records into groups in batch order. A FIFO batch (a ".fifo" source ARN or
// any MessageGroupId attribute) groups by MessageGroupId, in order of first appearance; a
// message of it without a group id, and every message of a standard queue, is a group alone.
func groupsOf(recs []events.SQSMessage) []group {
	fifo := false
	for _, m := range recs {
		if strings.HasSuffix(m.EventSourceARN, ".fifo") || m.Attributes["MessageGroupId"] != "" {
			fifo = true
			break
		}
	}
	groups := make([]group, 0, len(recs))
	byID := map[string]int{} // group id -> index in groups
	for i, m := range recs {
		id := m.Attributes["MessageGroupId"]
		if !fifo || id == "" {
			groups = append(groups, group{id: id, indices: []int{i}})
			continue
		}
		if k, ok := byID[id]; ok {
			groups[k].indices = append(groups[k].indices, i)
			continue
		}
		byID[id] = len(groups)
		groups = append(groups, group{id: id, indices: []int{i}})
	}
	return groups
}
