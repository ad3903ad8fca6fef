package idempotency_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
)

// benchFigures is what one variant measured.
type benchFigures struct {
	perSecond, p50, p99, requests, cpu float64
}

// BenchmarkEngine measures, in one run against DynamoDB Local, a plain non-idempotent PutItem
// of an effect (the baseline) and the engine committing the same effect for new messages, for
// duplicates, and for duplicates answered by the local cache; then prints them side by side
// with ratios to the baseline. Messages are processed one after another, so latency is per
// message and throughput is that of one execution environment.
func BenchmarkEngine(b *testing.B) {
	f := newBenchFixture(b)
	results := map[string]benchFigures{}
	order := []string{"baseline-putitem", "engine-new", "engine-duplicate", "engine-cached-duplicate", "engine-without-io"}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	noCache := f.ConsumerFor(b, "bench", f.noteHandler(), func(c *idempotency.Config) { c.Logger, c.CacheSize = quiet, -1 })
	cached := f.ConsumerFor(b, "bench", f.noteHandler(), func(c *idempotency.Config) { c.Logger, c.CacheSize = quiet, 1<<14 })
	ctx := context.Background()
	run := func(name string, prepare func(n int) []events.SQSMessage, do func(events.SQSMessage) error) {
		b.Run(name, func(b *testing.B) {
			fig := f.measure(b, prepare(b.N), do)
			results[name] = fig
			if b.N > 1 { // the measured run, not the first probe with one message
				fmt.Fprintf(os.Stderr, "bench: %-24s %d messages, %.0f msgs/s\n", name, b.N, fig.perSecond)
			}
		})
	}
	fresh := func(prefix string) func(int) []events.SQSMessage {
		return func(n int) []events.SQSMessage {
			msgs := make([]events.SQSMessage, n)
			for i := range msgs {
				msgs[i] = f.noteMessage(b, fmt.Sprintf("%s-%s-%d", prefix, testenvName(), i))
			}
			return msgs
		}
	}
	run("baseline-putitem", fresh("base"), func(m events.SQSMessage) error {
		ev, err := cloudevent.Decode([]byte(m.Body))
		if err != nil {
			return err
		}
		_, err = f.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.App), Item: f.noteItem(ev)})
		return err
	})
	expect := func(c *idempotency.Consumer, want idempotency.Outcome) func(events.SQSMessage) error {
		return func(m events.SQSMessage) error {
			res, err := applytest.Process(ctx, c, m)
			if err == nil && res.Outcome != want {
				err = fmt.Errorf("outcome %s, want %s", res.Outcome, want)
			}
			return err
		}
	}
	run("engine-new", fresh("new"), expect(noCache, idempotency.Applied))
	committed := func(c *idempotency.Consumer) func(int) []events.SQSMessage {
		return func(n int) []events.SQSMessage {
			msgs := fresh("dup")(n)
			for _, m := range msgs {
				if _, err := applytest.Process(ctx, c, m); err != nil {
					b.Fatal(err)
				}
			}
			return msgs
		}
	}
	run("engine-duplicate", committed(noCache), expect(noCache, idempotency.Duplicate))
	run("engine-cached-duplicate", committed(cached), expect(cached, idempotency.Duplicate))
	// The engine's own CPU per new message: decode, hash, effect checks, record encoding and
	// condition building, with a DB that answers at once and sends nothing anywhere.
	alone, err := idempotency.New(nopDB{}, f.noteHandler(), idempotency.Config{Name: "bench", Table: f.Records, CacheSize: -1, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	run("engine-without-io", fresh("cpu"), expect(alone, idempotency.Applied))

	base, ok := results[order[0]]
	if !ok {
		return
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "variant\tmsgs/s\tvs baseline\tp50 ms\tp99 ms\tDynamoDB req/msg\tCPU µs/msg\tCPU vs baseline\t")
	for _, name := range order {
		r, ok := results[name]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%s\t%.0f\t%.2fx\t%.2f\t%.2f\t%.2f\t%.0f\t%.2fx\t\n", name, r.perSecond, r.perSecond/base.perSecond,
			r.p50, r.p99, r.requests, r.cpu, r.cpu/base.cpu)
	}
	w.Flush()
}

// measure does each of msgs, one after another, and reports and returns what it measured:
// messages per second, latency, DynamoDB requests (calls) and this process's CPU per message.
func (f *fixture) measure(b *testing.B, msgs []events.SQSMessage, do func(events.SQSMessage) error) benchFigures {
	lat := make([]time.Duration, 0, b.N)
	req0, cpu0 := f.Requests.Total(), cpuTime()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := do(msgs[i]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	fig := benchFigures{
		perSecond: float64(b.N) / elapsed.Seconds(),
		p50:       ms(lat[len(lat)/2]),
		p99:       ms(lat[len(lat)*99/100]),
		requests:  float64(f.Requests.Total()-req0) / float64(b.N),
		cpu:       float64((cpuTime() - cpu0).Microseconds()) / float64(b.N),
	}
	b.ReportMetric(fig.perSecond, "msgs/s")
	b.ReportMetric(fig.p50, "p50-ms")
	b.ReportMetric(fig.p99, "p99-ms")
	b.ReportMetric(fig.requests, "ddb-req/msg")
	b.ReportMetric(fig.cpu, "cpu-µs/msg")
	return fig
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cpuTime is the user and system CPU this process (not DynamoDB Local) has used: the engine,
// the SDK's serialisation and the HTTP client, without time spent waiting for answers.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// nopDB answers every call with success and does no I/O: it isolates the engine's CPU cost in
// the benchmark. It is not used to test behaviour.
type nopDB struct{}

func (nopDB) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return &dynamodb.TransactWriteItemsOutput{}, nil
}
func (nopDB) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return &dynamodb.PutItemOutput{}, nil
}
func (nopDB) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return &dynamodb.GetItemOutput{}, nil
}
func (nopDB) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return &dynamodb.UpdateItemOutput{}, nil
}
func (nopDB) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return &dynamodb.DeleteItemOutput{}, nil
}
