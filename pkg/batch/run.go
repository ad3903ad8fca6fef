package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/denied"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/xray"
)

// Defaults applied to a zero Config field.
const (
	DefaultConcurrency    = 8
	DefaultDeadlineMargin = 2 * time.Second
)

// Config tunes a Runner. The zero value works.
type Config struct {
	// Concurrency is how many groups run at once. Default DefaultConcurrency.
	Concurrency int
	// DeadlineMargin is the time before the invocation's deadline at which no record is
	// started any more: it is reported NotStarted. Default DefaultDeadlineMargin.
	DeadlineMargin time.Duration
	// Logger is where decisions are logged. Default slog.Default().
	Logger *slog.Logger
	// Metrics counts metrics.DeadLettered. Default metrics.Discard.
	Metrics metrics.Recorder
}

// Validate reports every problem of c, joined. Zero fields are valid: they take defaults.
func (c Config) Validate() error {
	var errs []error
	if c.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("batch: Concurrency is %d; want 1 or more (0 means %d)", c.Concurrency, DefaultConcurrency))
	}
	if c.DeadlineMargin < 0 {
		errs = append(errs, fmt.Errorf("DeadlineMargin is %s; want a positive duration (0 means %s)", c.DeadlineMargin, DefaultDeadlineMargin))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.DeadlineMargin == 0 {
		c.DeadlineMargin = DefaultDeadlineMargin
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = metrics.Discard
	}
	return c
}

// Item is one record of a batch as the core sees it.
type Item struct {
	ID    string // logged as messageId: an SQS message id, a stream record's event id
	Group string // records of one group run in order; "" runs alone
	Trace string // the X-Ray trace header of who sent it, if any
}

// Outcome is what became of one record. The zero value, NotStarted, is never acknowledged.
type Outcome uint8

const (
	NotStarted Outcome = iota // the deadline guard, or never reached
	Acked                     // handled, or dead-lettered
	Failed                    // the handler failed; the source delivers it again
	Skipped                   // an earlier record of its group failed
)

// work is one batch for run.
type work struct {
	Items []Item
	// Workers is how many groups run at once; 0: Concurrency (never more than the groups).
	Workers int
	// Handle handles record i. An error marked idempotency.Permanent dead-letters it; any
	// other fails it.
	Handle func(ctx context.Context, i int) error
	// DeadLetter moves record i aside with its reason (errSentAlready: its letter was sent on
	// an earlier delivery, nothing sent now); nil: a permanent failure fails the
	// record, for the source's own policy.
	DeadLetter func(ctx context.Context, i int, reason error) error
	// Done is called by each worker once it takes no more groups (a pack's leave).
	Done func()
}

// Runner runs the batches of a Port: group order, concurrency, the deadline guard, panic
// recovery and dead-lettering. It is safe for concurrent use.
type Runner struct{ cfg Config }

// New returns a Runner configured by cfg.
func New(cfg Config) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg.withDefaults()}, nil
}

// workers is how many workers a batch of n groups gets: at most max(Concurrency, least).
func (r *Runner) workers(groups, least int) int {
	return min(max(r.cfg.Concurrency, least), groups)
}

// groupsOf splits items into groups in batch order of first appearance.
func groupsOf(items []Item) [][]int {
	groups := make([][]int, 0, len(items))
	byID := map[string]int{}
	for i, it := range items {
		if it.Group == "" {
			groups = append(groups, []int{i})
			continue
		}
		if k, ok := byID[it.Group]; ok {
			groups[k] = append(groups[k], i)
			continue
		}
		byID[it.Group] = len(groups)
		groups = append(groups, []int{i})
	}
	return groups
}

// run handles w's items, each group in order, and returns each item's outcome. It never
// panics; an item nobody decided on stays NotStarted.
func (r *Runner) run(ctx context.Context, w work) []Outcome {
	out := make([]Outcome, len(w.Items))
	groups := groupsOf(w.Items)
	workers := w.Workers
	if workers <= 0 {
		workers = r.workers(len(groups), 0)
	}
	queue := make(chan []int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			if w.Done != nil {
				defer w.Done()
			}
			for g := range queue {
				r.runGroup(ctx, w, g, out)
			}
		})
	}
	for _, g := range groups {
		queue <- g
	}
	close(queue)
	wg.Wait()
	r.reportNotStarted(ctx, w.Items, out)
	return out
}

// runGroup handles the items of g in order and stops at the first failure or when the
// deadline guard says so. Each worker writes only its own group's outcomes.
func (r *Runner) runGroup(ctx context.Context, w work, g []int, out []Outcome) {
	for n, i := range g {
		if !r.mayStart(ctx) {
			return // this and the rest of the group stay NotStarted
		}
		if r.process(ctx, w, i) {
			out[i] = Acked
			continue
		}
		out[i] = Failed
		rest := g[n+1:]
		for _, j := range rest {
			out[j] = Skipped
		}
		if len(rest) > 0 {
			r.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "rest of message group skipped, reported failed",
				slog.String("messageId", w.Items[i].ID), slog.String("group", w.Items[i].Group),
				slog.Int("count", len(rest)), slog.String("reason", "an earlier message of the group failed"))
		}
		return
	}
}

// mayStart is the deadline guard: no new record once ctx is done or its deadline is nearer
// than DeadlineMargin.
func (r *Runner) mayStart(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	dl, ok := ctx.Deadline()
	return !ok || time.Until(dl) >= r.cfg.DeadlineMargin
}

func (r *Runner) reportNotStarted(ctx context.Context, items []Item, out []Outcome) {
	var ids []string
	for i, o := range out {
		if o == NotStarted {
			ids = append(ids, items[i].ID)
		}
	}
	if len(ids) == 0 {
		return
	}
	reason := fmt.Sprintf("invocation deadline nearer than DeadlineMargin %s", r.cfg.DeadlineMargin)
	if err := ctx.Err(); err != nil {
		reason = err.Error()
	}
	r.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "messages not started, reported failed",
		slog.Int("count", len(ids)), slog.Any("messageIds", ids), slog.String("reason", reason))
}

// process handles one record and reports whether it may be acknowledged. It logs the decision
// for every record that is not a plain success. A record whose handling or dead-letter send
// was denied (denied.Of) is failed, whatever else its error says: it is delivered
// again once the permission is granted. The record's trace header, when it has one,
// is the trace of everything logged about it.
func (r *Runner) process(ctx context.Context, w work, i int) bool {
	it := w.Items[i]
	ctx = xray.NewContext(ctx, it.Trace)
	attrs := func(reason error) []slog.Attr {
		return []slog.Attr{slog.String("messageId", it.ID), slog.String("group", it.Group),
			slog.String("reason", reason.Error())}
	}
	err := r.protect(ctx, it, func() error { return w.Handle(ctx, i) })
	if err == nil {
		return true
	}
	if denial, ok := denied.Of(err); ok {
		r.denied(ctx, it, denial, "handling the message", err)
		return false
	}
	if !idempotency.IsPermanent(err) {
		r.cfg.Logger.LogAttrs(ctx, slog.LevelError, "message failed, reported for redelivery", attrs(err)...)
		return false
	}
	if w.DeadLetter == nil {
		r.cfg.Logger.LogAttrs(ctx, slog.LevelError,
			"message failed permanently, reported failed for the queue's redrive policy", attrs(err)...)
		return false
	}
	dlCtx, cancel := EndBefore(ctx, r.cfg.DeadlineMargin/4) // the batch must still answer in time
	dlErr := r.protect(ctx, it, func() error { return w.DeadLetter(dlCtx, i, err) })
	cancel()
	if errors.Is(dlErr, errSentAlready) {
		// Its letter is in the dead-letter queue: counted here, since the delivery that sent it
		// ended without its answer (a crash), and its metrics with it.
		r.cfg.Metrics.Count(metrics.DeadLettered, 1)
		r.cfg.Logger.LogAttrs(ctx, slog.LevelWarn,
			"message failed permanently, its letter sent on an earlier delivery: acknowledged, not sent again", attrs(err)...)
		return true
	}
	if denial, ok := denied.Of(dlErr); ok {
		r.denied(ctx, it, denial, "the dead-letter send", errors.Join(err, dlErr))
		return false
	}
	if dlErr != nil {
		r.cfg.Logger.LogAttrs(ctx, slog.LevelError,
			"message failed permanently and dead-lettering failed, reported for redelivery",
			attrs(errors.Join(err, dlErr))...)
		return false
	}
	r.cfg.Metrics.Count(metrics.DeadLettered, 1)
	r.cfg.Logger.LogAttrs(ctx, slog.LevelError, "message failed permanently, dead-lettered and acknowledged", attrs(err)...)
	return true
}

// denied reports a record left for redelivery because an AWS call made for it was denied
// (during names which): the deployment's fault, logged once at ERROR with the permission and
// counted as metrics.AccessDenied, never dead-lettered, never counted against the record.
func (r *Runner) denied(ctx context.Context, it Item, d *denied.AccessDenied, during string, reason error) {
	denied.Log(ctx, r.cfg.Logger, r.cfg.Metrics, d, during,
		slog.String("messageId", it.ID), slog.String("group", it.Group), slog.String("reason", reason.Error()),
		slog.String("outcome", "left for redelivery, not counted against the message, not dead-lettered"))
}

// protect runs f, turning a panic into an error after logging it with its stack.
func (r *Runner) protect(ctx context.Context, it Item, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
			r.cfg.Logger.LogAttrs(ctx, slog.LevelError, "panic recovered",
				slog.String("messageId", it.ID), slog.String("group", it.Group),
				slog.String("reason", err.Error()), slog.String("stack", string(debug.Stack())))
		}
	}()
	return f()
}

// EndBefore returns ctx ending margin before its deadline (ctx, cancellable, without one). A
// call of the failure path (the dead-letter send, a claim check's read) is bounded by
// EndBefore(ctx, DeadlineMargin/4): it ends while the batch can still answer, and a call that
// did not end in time fails its record, which is delivered again.
func EndBefore(ctx context.Context, margin time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, dl.Add(-margin))
	}
	return context.WithCancel(ctx)
}

// flush flushes the metrics recorder, logging a failure.
func (r *Runner) flush(ctx context.Context) {
	if err := metrics.Flush(r.cfg.Metrics); err != nil {
		r.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "metrics not flushed", slog.String("reason", err.Error()))
	}
}
