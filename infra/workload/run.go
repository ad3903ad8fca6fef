package workload

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/infra/gatekeeper"
)

// run is one workload in progress.
type run struct {
	cfg     Config
	cloud   Cloud
	t       *topology
	ddb     *dynamodb.Client
	sqs     *sqs.Client
	start   time.Time
	reqs    []request
	tr      traffic
	offsets map[string]map[string]int64 // function → log file → size at start
	phases  phases
	redrive redriveStats
	drilled drillStats
	// streamDrilled is the stream consumer's drill, beside the ledger's (Poison > 0).
	streamDrilled streamDrillStats
	// poisoned receives the accounts the ledger's drill poisoned, once it has, so that the
	// stream drill takes another.
	poisoned chan map[string]bool

	ownersMu sync.Mutex
	owners   map[string]*http.Client // account → its owner's client (ownerClient)

	// recorded is every idempotency record the drains found (pending): a record stays.
	recorded map[string]bool
	// stated is every account whose statement the drains found complete (statementPending).
	stated map[string]bool

	shownDenials int                               // the gatekeeper's refusals the progress lines showed
	denial       atomic.Pointer[gatekeeper.Denial] // the first refusal, once Config.StopOnDenial stopped the run
}

// Run drives the workload through cloud, waits until the pipeline is drained, and returns
// what happened with the invariants checked. An error means the workload could not be run or
// observed; failed invariants are in the Report (see Report.OK).
func Run(ctx context.Context, cloud Cloud, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	t, err := discover(cloud)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	ep := cloud.Endpoints()
	r := &run{cfg: cfg, cloud: cloud, t: t, ddb: ep.DynamoDBClient(), sqs: ep.SQSClient(), start: time.Now(),
		reqs: plan(cfg), offsets: map[string]map[string]int64{}, poisoned: make(chan map[string]bool, 1)}
	r.tr.status = map[int]int{}
	r.offsets[t.relay] = logOffsets(t.logs, t.relay)
	for _, c := range t.consumers {
		r.offsets[c.Function] = logOffsets(t.logs, c.Function)
	}
	if cfg.StopOnDenial {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go r.watchDenials(ctx, cancel)
	}
	rep, err := r.execute(ctx)
	if d := r.denial.Load(); d != nil {
		if cfg.Progress != nil { // the refusals the last progress line had no time to show
			r.printDenials(cfg.Progress, r.cloud.Stats().Access)
		}
		return nil, &DeniedError{Denial: *d}
	}
	return rep, err
}

// execute runs the workload's phases, then collects and verifies what happened.
func (r *run) execute(ctx context.Context) (*Report, error) {
	cfg, t, ep := r.cfg, r.t, r.cloud.Endpoints()
	rep := &Report{}

	r.phases.enter("requests")
	stop := r.progress(ctx)
	traffic, drilled, streamDrilled := make(chan struct{}), make(chan drillStats, 1), make(chan streamDrillStats, 1)
	streamDrill := cfg.Poison > 0 && len(t.streams) > 0
	if cfg.Poison > 0 {
		go func() { drilled <- r.drill(ctx, traffic) }()
	}
	if streamDrill {
		go func() { streamDrilled <- r.streamDrill(ctx, traffic) }()
	}
	drive(ctx, r.apiClient(), ep.APIURL, cfg, r.reqs, &r.tr)
	close(traffic)
	if _, err := resolveUnanswered(ctx, r.reqs, r.findMovement); err != nil {
		stop()
		return nil, fmt.Errorf("workload: %w", err)
	}
	if cfg.Poison > 0 {
		r.phases.enter("drill")
		r.drilled = <-drilled
	}
	if streamDrill {
		r.streamDrilled = <-streamDrilled
	}
	malformed, err := injectMalformed(ctx, r.sqs, t, cfg.Malformed)
	if err != nil {
		stop()
		return nil, fmt.Errorf("workload: %w", err)
	}
	if cfg.Redrive {
		r.phases.enter("settling")
		r.settle(ctx, cfg.DrainTimeout)
		r.phases.enter("redriving")
		if r.redrive, err = redrive(ctx, r.sqs, t); err != nil {
			stop()
			return nil, fmt.Errorf("workload: %w", err)
		}
	}
	r.phases.enter("draining")
	drained := r.drain(ctx)
	r.phases.enter("re-sending")
	rs, err := resend(ctx, r.ddb, r.sqs, t, r.acceptedEvents(), cfg.ResendRate, cfg.Seed)
	if err != nil {
		stop()
		return nil, fmt.Errorf("workload: %w", err)
	}
	r.phases.enter("draining re-sends")
	drained = errorsJoin(drained, r.drain(ctx))
	stop()
	rep.Duration = time.Since(r.start).Round(100 * time.Millisecond)
	r.phases.enter("verifying")
	tabs, err := readTables(ctx, r.ddb, t.appTable, t.idemTable)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	if err := r.collect(ctx, rep, rs, malformed, tabs); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	if err := r.verify(ctx, rep, malformed, drained, tabs); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	rep.Phases = r.phases.took()
	return rep, nil
}

// eventRef names an accepted event: its id and its subject, the aggregate it is about.
type eventRef struct{ subject, id string }

// acceptedEvents returns the events the API accepted, sorted by id.
func (r *run) acceptedEvents() []eventRef {
	var evs []eventRef
	for _, q := range r.reqs {
		switch {
		case q.note != nil && q.note.ID != "":
			evs = append(evs, eventRef{subject: q.note.ID, id: noteEventID(q.note.ID)})
		case q.move != nil && q.move.EventID != "":
			evs = append(evs, eventRef{subject: q.move.Account, id: q.move.EventID})
		}
	}
	slices.SortFunc(evs, func(a, b eventRef) int { return strings.Compare(a.id, b.id) })
	return evs
}

// expected returns, per consumer name, the idempotency keys the accepted events must leave.
func (r *run) expected() map[string][]string {
	out := map[string][]string{}
	for _, q := range r.reqs {
		var typ, id string
		switch {
		case q.note != nil && q.note.ID != "":
			typ, id = "note.created", noteEventID(q.note.ID)
		case q.move != nil && q.move.EventID != "":
			typ, id = q.move.Type, q.move.EventID
		default:
			continue
		}
		for _, c := range r.t.consumersOf(typ) {
			out[c.Name] = append(out[c.Name], c.Name+"#"+id)
		}
	}
	return out
}

// drain waits until every consumer queue is empty and every accepted event has its record
// at every consumer, twice in a row; it returns why it gave up after cfg.DrainTimeout.
func (r *run) drain(ctx context.Context) error {
	want := r.expected()
	return waitDrained(ctx, time.Now, r.cfg.DrainTimeout, time.Second, func(ctx context.Context) (string, error) {
		return r.pending(ctx, want)
	})
}

// waitDrained runs check every interval until it finds nothing pending twice in a row; after
// timeout (by the clock now) it gives up with what the last check found pending. A check that
// found nothing is always confirmed, even past timeout: a check of a large run takes minutes
// (it scans tables).
func waitDrained(ctx context.Context, now func() time.Time, timeout, interval time.Duration, check func(context.Context) (string, error)) error {
	deadline := now().Add(timeout)
	calm := 0
	for {
		missing, err := check(ctx)
		switch {
		case err != nil:
			missing = err.Error()
			calm = 0
		case missing == "":
			if calm++; calm == 2 {
				return nil
			}
		default:
			calm = 0
		}
		if calm == 0 && now().After(deadline) {
			return fmt.Errorf("not drained after %s: %s", timeout, missing)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// pending says what is not done yet, "" when nothing. It reads only what it has not found yet
// (found, statementPending): over the drains of a run, its reads of the tables are linear in
// what they check, where a scan of DynamoDB Local's tables, each check, grows with the square of
// their size.
func (r *run) pending(ctx context.Context, want map[string][]string) (string, error) {
	var out []string
	for _, u := range r.t.sourceQueues() {
		d, err := queueDepth(ctx, r.sqs, u)
		if err != nil {
			return "", err
		}
		if d.total() > 0 {
			out = append(out, fmt.Sprintf("%s holds %d", r.t.queues[u], d.total()))
		}
	}
	if len(out) > 0 { // the tables are read once the queues are empty
		return strings.Join(out, ", "), nil
	}
	if r.recorded == nil {
		r.recorded = map[string]bool{}
	}
	var unseen []string
	for _, keys := range want {
		for _, k := range keys {
			if !r.recorded[k] {
				unseen = append(unseen, k)
			}
		}
	}
	if err := found(ctx, r.ddb, r.t.idemTable, unseen, r.recorded); err != nil {
		return "", err
	}
	for _, name := range sortedKeys(want) {
		n := 0
		for _, k := range want[name] {
			if !r.recorded[k] {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%s lacks %d records", name, n))
		}
	}
	if len(out) == 0 { // the statements follow the ledger: read them once it is done
		behind, err := r.statementPending(ctx)
		if err != nil || behind != "" {
			return behind, err
		}
	}
	return strings.Join(out, ", "), nil
}

// progress prints a line every cfg.ProgressEvery until the returned stop is called.
func (r *run) progress(ctx context.Context) (stop func()) {
	if r.cfg.Progress == nil {
		return func() {}
	}
	fmt.Fprintln(r.cfg.Progress, progressLegend)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(r.cfg.ProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				r.printProgress(ctx, r.cfg.Progress)
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (r *run) printProgress(ctx context.Context, w io.Writer) {
	st := r.cloud.Stats()
	p := progress{elapsed: time.Since(r.start), phase: r.phases.current(), done: r.tr.done.Load(), total: int64(len(r.reqs)),
		http: r.tr.requests.Load(), relay: int64(st.Mappings[r.t.relayMapping].Succeeded)}
	if st.Faults != nil {
		p.chaos = true
		for _, n := range st.Faults {
			p.faults += int64(n)
		}
	}
	p.denied = r.printDenials(w, st.Access)
	for _, c := range r.t.consumers {
		d, err := queueDepth(ctx, r.sqs, c.QueueURL)
		if err != nil {
			continue
		}
		p.consumers = append(p.consumers, consumerProgress{name: c.Name, queued: int64(d.visible + d.delayed),
			inFlight: int64(d.inFlight), acked: int64(st.Mappings[c.Mapping].Succeeded)})
	}
	fmt.Fprintln(w, p.line())
}

func errorsJoin(a, b error) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return fmt.Errorf("%w; %w", a, b)
}
