package sqsbatch_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// figures is what one variant measured. Latency is per unit: a message for the sequential
// variants, a batch of 10 for the batch variants.
type figures struct {
	perSecond, calls, p50, p99 float64
	unit                       string
}

// variant is one way of committing n messages: prepare builds the work (untimed) and returns
// the number of units and the function doing unit i.
type variant struct {
	name    string
	unit    string // "msg" or "batch"
	prepare func(b *testing.B, e *benchEnv, n int) (units int, do func(i int) error)
}

// BenchmarkSideBySide measures, in one run on one DynamoDB Local, bare TransactWriteItems
// calls doing the engine's writes (the floor) and the engine doing them, per message and in
// batches of 10 messages in 10 FIFO groups, for new messages and for duplicates; each directly
// and through a proxy adding 5 ms to every round trip. The variants run interleaved, in
// rounds, each on its own tables, so that a noisy machine, DynamoDB Local's garbage
// collections and its tables' growth hit them alike. It prints one table per latency with
// ratios to the floor, the targets, and the cost model.
func BenchmarkSideBySide(b *testing.B) {
	for _, delay := range []time.Duration{0, 5 * time.Millisecond} {
		b.Run(fmt.Sprintf("+%dms", delay.Milliseconds()), func(b *testing.B) {
			url := fault.LatencyProxy(b, testkit.Emulator(b, testkit.EndpointVariable), delay)
			warmUp(b, newBenchEnv(b, url))
			results := interleaved(b, url)
			r := func(name string) float64 { return results[name].perSecond }
			b.ReportMetric(r("engine-sequential")/r("floor-sequential"), "seq/floor")
			b.ReportMetric(r("engine-packed")/r("engine-concurrent"), "packed/concurrent")
			if b.N < 100 { // the testing package's first, one-message probe
				return
			}
			printFigures(delay, b.N, results)
			if delay > 0 {
				printTargets(results)
				printCost(os.Stdout, costModel(newBenchEnv(b, url).floorItems(b, benchMessage(b, "cost", 0))))
			}
		})
	}
}

// warmUp commits a few hundred transactions untimed, so that the first variant does not pay
// for DynamoDB Local's start (class loading, JIT) and the client's first connections.
func warmUp(b *testing.B, e *benchEnv) {
	_, do := floorBatch(b, e, 2000)
	for i := range 200 {
		if err := do(i); err != nil {
			b.Fatal(err)
		}
	}
}

// work is one variant prepared: its units and their timings so far.
type work struct {
	v     variant
	e     *benchEnv
	units int
	do    func(int) error
	busy  time.Duration
	lat   []time.Duration
}

// rounds is how many slices each variant's work is cut into, run in turn: fine enough that a
// burst of load on the machine lands on every variant alike.
const rounds = 100

// interleaved prepares every variant for b.N messages, then runs them in rounds, each round
// doing a hundredth of every variant's units in turn.
func interleaved(b *testing.B, url string) map[string]figures {
	var ws []*work
	for _, v := range sideBySide() {
		w := &work{v: v, e: newBenchEnv(b, url)}
		w.units, w.do = v.prepare(b, w.e, b.N)
		ws = append(ws, w)
	}
	req0 := make([]int64, len(ws))
	for i, w := range ws {
		req0[i] = w.e.requests.Total()
	}
	b.ResetTimer()
	for r := range rounds {
		for _, w := range ws {
			for i := r * w.units / rounds; i < (r+1)*w.units/rounds; i++ {
				t0 := time.Now()
				if err := w.do(i); err != nil {
					b.Fatalf("%s: %v", w.v.name, err)
				}
				d := time.Since(t0)
				w.busy += d
				w.lat = append(w.lat, d)
			}
		}
	}
	b.StopTimer()
	out := map[string]figures{}
	for i, w := range ws {
		if len(w.lat) == 0 {
			continue
		}
		slices.Sort(w.lat)
		msgs := float64(w.units)
		if w.v.unit == "batch" {
			msgs *= 10
		}
		out[w.v.name] = figures{perSecond: msgs / w.busy.Seconds(), calls: float64(w.e.requests.Total()-req0[i]) / msgs,
			p50: ms(w.lat[len(w.lat)/2]), p99: ms(w.lat[len(w.lat)*99/100]), unit: w.v.unit}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sideBySide lists the variants in the order they are printed.
func sideBySide() []variant {
	return []variant{
		{"floor-sequential", "msg", floorSequential},
		{"engine-sequential", "msg", engineSequential(idempotency.Applied)},
		{"floor-batch", "batch", floorBatch},
		{"engine-concurrent", "batch", engineBatches(sqsbatch.Config{Options: batch.Options{NoPacking: true}}, -1, false)},
		{"engine-packed", "batch", engineBatches(sqsbatch.Config{}, -1, false)},
		{"duplicate-sequential", "msg", engineSequential(idempotency.Duplicate)},
		{"duplicate-batch", "batch", engineBatches(sqsbatch.Config{}, -1, true)},
		{"duplicate-cached", "batch", engineBatches(sqsbatch.Config{}, 1<<14, true)},
	}
}

func flatten(batches []events.SQSEvent) []events.SQSMessage {
	var msgs []events.SQSMessage
	for _, batch := range batches {
		msgs = append(msgs, batch.Records...)
	}
	return msgs
}

func floorSequential(b *testing.B, e *benchEnv, n int) (int, func(int) error) {
	msgs := flatten(benchBatches(b, name("floor"), n))
	ins := make([]*dynamodb.TransactWriteItemsInput, len(msgs))
	for i, m := range msgs {
		ins[i] = &dynamodb.TransactWriteItemsInput{TransactItems: e.floorItems(b, m)}
	}
	return len(ins), func(i int) error {
		_, err := e.db.TransactWriteItems(context.Background(), ins[i])
		return err
	}
}

// floorBatch writes the 10 messages of a batch in one TransactWriteItems: the least any
// packing engine can do.
func floorBatch(b *testing.B, e *benchEnv, n int) (int, func(int) error) {
	batches := benchBatches(b, name("floorb"), n)
	ins := make([]*dynamodb.TransactWriteItemsInput, len(batches))
	for i, batch := range batches {
		var items []types.TransactWriteItem
		for _, m := range batch.Records {
			items = append(items, e.floorItems(b, m)...)
		}
		ins[i] = &dynamodb.TransactWriteItemsInput{TransactItems: items}
	}
	return len(ins), func(i int) error {
		_, err := e.db.TransactWriteItems(context.Background(), ins[i])
		return err
	}
}

// engineSequential applies messages one after another with a consumer without cache; for
// want Duplicate they are committed first (untimed).
func engineSequential(want idempotency.Outcome) func(*testing.B, *benchEnv, int) (int, func(int) error) {
	return func(b *testing.B, e *benchEnv, n int) (int, func(int) error) {
		c := e.consumer(b, -1)
		msgs := flatten(benchBatches(b, name("seq"), n))
		apply := func(m events.SQSMessage) error {
			ev, err := cloudevent.Decode([]byte(m.Body))
			if err != nil {
				return err
			}
			res, err := c.Apply(context.Background(), ev, sqsbatch.DeliveryOf(m))
			if err == nil && res.Outcome != want {
				err = fmt.Errorf("outcome %s, want %s", res.Outcome, want)
			}
			return err
		}
		if want == idempotency.Duplicate {
			for _, m := range msgs {
				if _, err := c.Apply(context.Background(), decode(b, m), sqsbatch.DeliveryOf(m)); err != nil {
					b.Fatal(err)
				}
			}
		}
		return len(msgs), func(i int) error { return apply(msgs[i]) }
	}
}

// engineBatches hands batches to a Processor; redelivered batches are handled once first
// (untimed), so that the timed run sees duplicates.
func engineBatches(cfg sqsbatch.Config, cacheSize int, redelivered bool) func(*testing.B, *benchEnv, int) (int, func(int) error) {
	return func(b *testing.B, e *benchEnv, n int) (int, func(int) error) {
		p := e.processor(b, cacheSize, cfg)
		batches := benchBatches(b, name("batch"), n)
		handle := func(batch events.SQSEvent) error {
			resp, err := p.Handle(context.Background(), batch)
			if err == nil && len(resp.BatchItemFailures) > 0 {
				err = fmt.Errorf("%d messages failed", len(resp.BatchItemFailures))
			}
			return err
		}
		if redelivered {
			for _, batch := range batches {
				if err := handle(batch); err != nil {
					b.Fatal(err)
				}
			}
		}
		return len(batches), func(i int) error { return handle(batches[i]) }
	}
}

func decode(b *testing.B, m events.SQSMessage) cloudevent.Event {
	ev, err := cloudevent.Decode([]byte(m.Body))
	if err != nil {
		b.Fatal(err)
	}
	return ev
}

var runs int

// name is a prefix unique to one prepare call, so that no two runs share event ids.
func name(prefix string) string {
	runs++
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), runs)
}

func printFigures(delay time.Duration, n int, results map[string]figures) {
	floor, ok := results["floor-sequential"]
	if !ok {
		return
	}
	fmt.Printf("\n\nside by side, %d messages per variant, interleaved in %d rounds; DynamoDB Local +%s per round trip\n", n, rounds, delay)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "variant\tmsgs/s\tvs floor\tDynamoDB calls/msg\tp50 ms\tp99 ms\tlatency of one\t")
	for _, v := range sideBySide() {
		r, ok := results[v.name]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%s\t%.0f\t%.2fx\t%.2f\t%.2f\t%.2f\t%s\t\n", v.name, r.perSecond, r.perSecond/floor.perSecond,
			r.calls, r.p50, r.p99, r.unit)
	}
	w.Flush()
}

// printTargets checks the targets against one latency's results.
func printTargets(r map[string]figures) {
	check := func(what string, got, want float64, atLeast bool) {
		if math.IsNaN(got) || math.IsInf(got, 0) {
			fmt.Printf("target %-58s not measured in this run\n", what)
			return
		}
		met := got >= want
		if !atLeast {
			met = got <= want
		}
		verdict := "met"
		if !met {
			verdict = fmt.Sprintf("MISSED by %.2f", got-want)
		}
		fmt.Printf("target %-58s got %6.2f want %s %.2f: %s\n", what, got, map[bool]string{true: ">=", false: "<="}[atLeast], want, verdict)
	}
	fmt.Println()
	check("engine-sequential / floor-sequential (msgs/s)", r["engine-sequential"].perSecond/r["floor-sequential"].perSecond, 0.95, true)
	check("engine-packed / engine-concurrent (msgs/s)", r["engine-packed"].perSecond/r["engine-concurrent"].perSecond, 2, true)
	check("duplicate-batch DynamoDB calls per message", r["duplicate-batch"].calls, 1, false)
	check("duplicate-cached DynamoDB calls per message", r["duplicate-cached"].calls, 0, false)
	fmt.Println()
}
