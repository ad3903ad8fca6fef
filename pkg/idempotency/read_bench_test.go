package idempotency_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
)

// BenchmarkReads measures what a read through the engine adds per message, against DynamoDB
// Local: the note handler of BenchmarkEngine as it is (it reads nothing), and the same handler
// reading one item first (a settings item it does not write, so the read is a ConditionCheck
// of its own in the commit). It reports DynamoDB calls per message (calls/msg) and latency,
// and prints them side by side.
func BenchmarkReads(b *testing.B) {
	f := newBenchFixture(b)
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	settings := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "SETTINGS"}, "sk": &types.AttributeValueMemberS{Value: "NOTES"}}
	if _, err := f.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.App),
		Item: map[string]types.AttributeValue{"pk": settings["pk"], "sk": settings["sk"], "maxLength": &types.AttributeValueMemberN{Value: "4096"}}}); err != nil {
		b.Fatal(err)
	}
	reading := idempotency.HandlerFunc(func(ctx context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		if _, err := idempotency.Read(ctx, f.App, settings, nil); err != nil {
			return nil, err
		}
		return f.noteHandler().Decide(ctx, ev)
	})
	variants := []struct {
		name    string
		handler idempotency.Handler
	}{{"reads-nothing", f.noteHandler()}, {"reads-one", reading}}
	type figures struct{ calls, perSecond, p50 float64 }
	results := map[string]figures{}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			c := f.ConsumerFor(b, "bench-"+v.name, v.handler, func(c *idempotency.Config) { c.Logger, c.CacheSize = quiet, -1 })
			msgs := make([]events.SQSMessage, b.N)
			for i := range msgs {
				msgs[i] = f.noteMessage(b, fmt.Sprintf("%s-%s-%d", v.name, testenvName(), i))
			}
			lat := make([]time.Duration, 0, b.N)
			req0 := f.Requests.Total()
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				t0 := time.Now()
				res, err := applytest.Process(context.Background(), c, msgs[i])
				if err != nil || res.Outcome != idempotency.Applied {
					b.Fatalf("outcome %s, %v; want applied", res.Outcome, err)
				}
				lat = append(lat, time.Since(t0))
			}
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lat)
			fig := figures{calls: float64(f.Requests.Total()-req0) / float64(b.N), perSecond: float64(b.N) / elapsed.Seconds(), p50: ms(lat[len(lat)/2])}
			b.ReportMetric(fig.calls, "calls/msg")
			b.ReportMetric(fig.perSecond, "msgs/s")
			b.ReportMetric(fig.p50, "p50-ms")
			results[v.name] = fig
		})
	}
	base, ok := results[variants[0].name]
	if !ok {
		return
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "reads\tmsgs/s\tp50 ms\tDynamoDB calls/msg\tadded calls/msg\t")
	for _, v := range variants {
		if r, ok := results[v.name]; ok {
			fmt.Fprintf(w, "%s\t%.0f\t%.2f\t%.2f\t%+.2f\t\n", v.name, r.perSecond, r.p50, r.calls, r.calls-base.calls)
		}
	}
	w.Flush()
}
