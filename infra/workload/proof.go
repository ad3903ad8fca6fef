package workload

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// claimRow is what a consumer's "effects applied twice" was computed from, for the page's
// note under the claim chart.
type claimRow struct {
	Consumer                    string
	Records, AppliedAndRejected int
}

// appliedTwice is how many outcomes a consumer counted beyond one idempotency record per event:
// every applied or rejected outcome writes the event's record in the same transaction, so a
// count above the records would be an event decided, and its effect applied, twice. A killed
// environment may lose the metric line of a committed batch, never add one: the difference
// is counted only when positive.
func (c ConsumerReport) appliedTwice() int { return max(c.Applied+c.Rejected-c.Records, 0) }

// claimChart is the claim per consumer: messages delivered (redeliveries included), duplicates
// caught, effects applied twice.
func (r *Report) claimChart() (chart, []claimRow) {
	var rows []barRow
	var table []claimRow
	for _, c := range r.Consumers {
		rows = append(rows, barRow{Group: c.Name, Label: "deliveries (redeliveries included)", Value: float64(c.Delivered), Series: 0},
			barRow{Group: c.Name, Label: "duplicates caught", Value: float64(c.Duplicates), Series: 1},
			barRow{Group: c.Name, Label: "effects applied twice", Value: float64(c.appliedTwice()), Series: 3, Emphasis: true})
		table = append(table, claimRow{Consumer: c.Name, Records: c.Records, AppliedAndRejected: c.Applied + c.Rejected})
	}
	legend := []legendEntry{{Name: "deliveries", Series: 0}, {Name: "duplicates caught", Series: 1},
		{Name: "effects applied twice", Series: 3}}
	return hbars("claim", "The claim: every delivery, every duplicate caught, no effect applied twice", rows, legend), table
}

// factRow is one figure of the faults tables: its value, a bar's share of the table's largest
// (on a logarithmic scale, so that 3 shows beside 3,000) and what it counts.
type factRow struct {
	Label string
	Value int
	Bar   string // width in percent
	What  string
}

func facts(rows []factRow) []factRow {
	top := 1
	for _, f := range rows {
		top = max(top, f.Value)
	}
	for i := range rows {
		rows[i].Bar = fmt.Sprintf("%.1f", logShare(rows[i].Value, top)*100)
	}
	return rows
}

// injected lists what the workload and the cloud did on purpose.
func (r *Report) injected() []factRow {
	rows := []factRow{
		{"API requests retried with the same key", r.Retries, "", "deliberate second sends of a request with its Idempotency-Key or reference; each must get the first answer"},
		{"events re-sent under a new deduplication id", r.Resent, "", fmt.Sprintf("accepted events sent again to every queue they are routed to (%d messages), as a producer would after SQS's 5-minute window; each send made twice", r.ResentMsgs)},
		{"malformed messages", r.Malformed, "", "messages no consumer can decode, sent straight to the consumer queues; each must end in a dead-letter queue"},
	}
	if r.Faults != nil {
		for _, k := range localcloud.FaultKinds {
			rows = append(rows, factRow{"cloud fault: " + k, r.Faults[k], "", faultWhat[k]})
		}
	}
	if d := r.Drill; len(d.Poisoned) > 0 {
		rows = append(rows, factRow{"accounts poisoned (recovery drill)", len(d.Poisoned), "", "a producer's bad message (malformed, or an event id reused with another payload) sent mid-run into an account's group: the ledger holds the account behind it"})
	}
	return facts(rows)
}

// faultWhat says what each of the cloud's fault kinds does.
var faultWhat = map[string]string{
	localcloud.FaultThrottle:     "a DynamoDB or SQS call answered with the service's throttling error, not forwarded",
	localcloud.FaultServerError:  "a call answered with a 500 InternalServerError, not forwarded",
	localcloud.FaultConflict:     "a TransactWriteItems cancelled with a TransactionConflict reason, not forwarded",
	localcloud.FaultResetBefore:  "a connection reset before the request reached the emulator: nothing done",
	localcloud.FaultResetAfter:   "a connection reset after the emulator answered: done, but the caller does not know",
	localcloud.FaultLatency:      "a request held back before it was forwarded",
	localcloud.FaultKillDuring:   "an execution environment killed while it ran an invocation",
	localcloud.FaultKillAfterAck: "an execution environment killed after its invocation returned, its answer dropped",
}

// caused lists what the injections made the pipeline do.
func (r *Report) caused() []factRow {
	dups, redelivered, restarts := 0, 0, 0
	for _, c := range r.Consumers {
		dups, redelivered, restarts = dups+c.Duplicates, redelivered+c.Redelivered, restarts+c.Restarts
	}
	rows := []factRow{
		{"API attempts repeated after a 5xx or network error", r.TransientRetries, "", "the workload's client sending a request again after an answer it could not use"},
		{"re-sends deduplicated by SQS", r.BrokerDedup, "", "second sends of a re-sent message that SQS answered with the first's message id; counted per message, one per queue an event is routed to, so it may exceed the events re-sent"},
		{"messages redelivered to consumers", redelivered, "", "deliveries after a failed item, a failed invocation or a crash (every consumer)"},
		{"duplicates caught by consumers", dups, "", "deliveries whose event was already recorded: answered from the record, the effect not touched"},
		{"execution environments restarted", restarts, "", "consumer environments started again after they were killed"},
		{"relay batches failed", r.RelayFailedBatches, "", "stream batches the outbox relay's invocation failed, read again from the stream"},
	}
	if r.Faults != nil {
		rows = append(rows, factRow{"dead letters redriven", total(r.Redriven), "", redrivenWhat(r.Redriven)})
	}
	if d := r.Drill; len(d.Poisoned) > 0 { // the recovery drill, with the operator's CLI
		rows = append(rows,
			factRow{"drill: live movements held behind a bad message", d.HeldBehind, "", "movements of a poisoned account that arrived while it was held: dead-lettered after it, in order"},
			factRow{"drill: letters discarded", d.Discarded, "", "bad letters dropped with onceflow dlq discard: recorded as discarded, a copy kept for record get"},
			factRow{"drill: blockers skipped", d.Skipped, "", "holds let go past their blocker with onceflow hold skip, the held tail kept in order, its letter moved behind the tail's"},
			factRow{"drill: skipped letters back, unheld", d.Requeued, "", "skipped letters redriven after their held tail, dead-lettered again without holding their account, then discarded"},
			factRow{"drill: discarded events sent again", d.Returned, "", "a producer's re-send of a discarded event, answered from its record: no letter, no hold"},
			factRow{"drill: letters redriven", d.Redriven, "", "letters moved back with onceflow dlq redrive, in group order, with fresh deduplication ids"})
	}
	return facts(rows)
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func redrivenWhat(m map[string]int) string {
	s := "letters moved back from the dead-letter queues to their source queues"
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i == 0 {
			s += "; dead-lettered for: "
		} else {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", m[k], k)
	}
	return s
}

// logShare places v on a logarithmic scale of 0 to top: 0 at 0, 1 one step in, top at 1.
func logShare(v, top int) float64 {
	if v <= 0 {
		return 0
	}
	return (1 + math.Log10(float64(v))) / (1 + math.Log10(float64(max(top, 1))))
}
