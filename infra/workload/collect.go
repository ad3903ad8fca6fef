package workload

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/outbox"
)

// collect counts what happened from the cloud's stats, the functions' metrics, the tables and
// the queues.
func (r *run) collect(ctx context.Context, rep *Report, rs resendStats, malformed map[string][]string, tabs tables) error {
	st := r.cloud.Stats()
	rep.Access = st.Access
	rep.Requests, rep.Retries = int(r.tr.requests.Load()), int(r.tr.retries.Load())
	rep.TransientRetries, rep.Failed = int(r.tr.transient.Load()), int(r.tr.failed.Load())
	r.tr.mu.Lock()
	rep.Status = maps.Clone(r.tr.status)
	r.tr.mu.Unlock()
	fns := r.cloud.Functions()
	for id, f := range st.Functions {
		if id == "ApiFunction" {
			rep.APIInvocations = f.Invocations
		}
		mem := FunctionMemory{Function: id, PeakRSSKiB: f.PeakRSSKiB, MemorySize: fns[id].MemorySize}
		for key, m := range st.Mappings {
			if strings.HasPrefix(key, id+"/") {
				mem.LargestBatch = max(mem.LargestBatch, m.LargestBatch)
			}
		}
		rep.Memory = append(rep.Memory, mem)
	}
	slices.SortFunc(rep.Memory, func(a, b FunctionMemory) int { return strings.Compare(a.Function, b.Function) })
	rep.Accepted = len(r.acceptedEvents())
	rep.Resent, rep.ResentMsgs, rep.BrokerDedup = rs.events, rs.messages, rs.deduped
	for _, m := range malformed {
		rep.Malformed += len(m)
	}
	for _, item := range tabs.app {
		if kindOf(item) == outbox.Kind {
			rep.OutboxItems++
		}
	}
	relay, err := emfCounts(r.t.logs, r.t.relay, r.offsets[r.t.relay])
	if err != nil {
		return err
	}
	rep.Published = int(relay[metrics.Published])
	rm := st.Mappings[r.t.relayMapping]
	rep.RelayRecords, rep.RelayFailedBatches = rm.Records, rm.FailedBatches
	recs := tabs.recs
	rep.Started, rep.Commits, rep.AcceptedAt = r.start, r.commits(recs), r.acceptedTimes()
	for _, c := range r.t.consumers {
		m := st.Mappings[c.Mapping]
		emf, err := emfCounts(r.t.logs, c.Function, r.offsets[c.Function])
		if err != nil {
			return err
		}
		d, err := queueDepth(ctx, r.sqs, c.DLQURL)
		if err != nil {
			return err
		}
		cr := ConsumerReport{Name: c.Name, Function: c.Function, Delivered: m.Records, Acknowledged: m.Succeeded,
			Redelivered: m.Records - m.Succeeded - m.Filtered,
			Applied:     int(emf[metrics.Applied]), Duplicates: int(emf[metrics.Duplicate]), Rejected: int(emf[metrics.Rejected]),
			Malformed: int(emf[metrics.Malformed]), DeadLettered: int(emf[metrics.DeadLettered]),
			DLQDepth: d.total(), Restarts: st.Functions[c.Function].Restarts}
		for k := range recs {
			if strings.HasPrefix(k, c.Name+"#") {
				cr.Records++
			}
		}
		rep.Consumers = append(rep.Consumers, cr)
	}
	rep.Faults, rep.Redriven = st.Faults, r.redrive.reasons
	d := r.drilled
	rep.Drill = Drill{HeldBehind: d.heldBehind, Discarded: len(d.discarded), Skipped: d.skipped, Requeued: d.requeued, Returned: d.returned,
		Redriven: d.redriven, Redrives: d.rounds, Commands: d.commands}
	for _, p := range d.poisons {
		how := p.kind
		if p.skip {
			how += ", skipped first"
		}
		if p.kind == poisonMalformed {
			how += ", sent again once discarded"
		}
		rep.Drill.Poisoned = append(rep.Drill.Poisoned, fmt.Sprintf("%s (%s)", p.account, how))
	}
	rep.Crash = "none injected"
	if cr := r.cfg.Crash; cr != nil {
		rep.Crash = fmt.Sprintf("%s: not triggered (fewer than %d invocations)", cr.Function, cr.After)
		if cr.Fired() {
			rep.Crash = fmt.Sprintf("%s environment killed after its invocation #%d committed, answer dropped; environments restarted: %d",
				cr.Function, cr.After, st.Functions[cr.Function].Restarts)
		}
	}
	return nil
}
