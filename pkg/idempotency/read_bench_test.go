package idempotency_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"text/tabwriter"

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
// of its own in the commit). It reports DynamoDB calls per message (ddb-req/msg) and
// latency, and prints them side by side.
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
	results := map[string]benchFigures{}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			c := f.ConsumerFor(b, "bench-"+v.name, v.handler, func(c *idempotency.Config) { c.Logger, c.CacheSize = quiet, -1 })
			msgs := make([]events.SQSMessage, b.N)
			for i := range msgs {
				msgs[i] = f.noteMessage(b, fmt.Sprintf("%s-%s-%d", v.name, testenvName(), i))
			}
			results[v.name] = f.measure(b, msgs, func(m events.SQSMessage) error {
				res, err := applytest.Process(context.Background(), c, m)
				if err == nil && res.Outcome != idempotency.Applied {
					err = fmt.Errorf("outcome %s, want applied", res.Outcome)
				}
				return err
			})
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
			fmt.Fprintf(w, "%s\t%.0f\t%.2f\t%.2f\t%+.2f\t\n", v.name, r.perSecond, r.p50, r.requests, r.requests-base.requests)
		}
	}
	w.Flush()
}
