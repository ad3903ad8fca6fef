package batch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/kinesisbatch"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// portBench is one port variant: its tables, its counted client, and a handler of batch i.
type portBench struct {
	name     string
	mode     string // "packed" or "unpacked"
	requests *testenv.Requests
	handle   func(i int) error
	busy     time.Duration
}

// batchSize records per batch, one per key: the next record of ten keys, as the SQS
// benchmarks' ten FIFO groups.
const batchSize = 10

// BenchmarkPorts measures the three ports (SQS, DynamoDB Streams, Kinesis) on the same batch
// core and the same engine, packed and unpacked, on DynamoDB Local: batches of 10 new records
// of 10 keys, each record's effect one Put. The variants run interleaved in rounds, each on its
// own tables. It prints records per second, DynamoDB calls per record and the ratio to the SQS
// port in the same packing mode (the baseline, measured in the same run).
func BenchmarkPorts(b *testing.B) {
	batches := max(b.N/batchSize, 1)
	var vs []*portBench
	for _, packed := range []bool{false, true} {
		mode := map[bool]string{false: "unpacked", true: "packed"}[packed]
		vs = append(vs, sqsVariant(b, mode, !packed, batches), dynamoVariant(b, mode, !packed, batches),
			kinesisVariant(b, mode, !packed, batches))
	}
	const rounds = 20
	b.ResetTimer()
	for r := range rounds {
		for j := range vs {
			v := vs[(r+j)%len(vs)] // each round starts with another variant: none always runs first
			for i := r * batches / rounds; i < (r+1)*batches/rounds; i++ {
				t0 := time.Now()
				if err := v.handle(i); err != nil {
					b.Fatalf("%s: %v", v.name, err)
				}
				v.busy += time.Since(t0)
			}
		}
	}
	b.StopTimer()
	if b.N < 100 { // the testing package's first probe
		return
	}
	records := float64(batches * batchSize)
	perSecond := map[string]float64{}
	for _, v := range vs {
		perSecond[v.name] = records / v.busy.Seconds()
	}
	fmt.Printf("\nports: %d records each, batches of %d records of %d keys, one Put per record, DynamoDB Local\n", int(records), batchSize, batchSize)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "variant\trecords/s\tDynamoDB calls/record\tvs SQS port, same mode\t")
	for _, v := range vs {
		base := "sqs-" + v.mode
		fmt.Fprintf(w, "%s\t%.0f\t%.2f\t%.2fx\t\n", v.name, perSecond[v.name], float64(v.requests.Total())/records,
			perSecond[v.name]/perSecond[base])
	}
	_ = w.Flush()
	for _, port := range []string{"sqs", "dynamodb", "kinesis"} {
		fmt.Printf("%s: packed/unpacked %.2fx\n", port, perSecond[port+"-packed"]/perSecond[port+"-unpacked"])
	}
}

// engine is a fresh consumer on fresh tables: each record's effect is one Put.
func engine(b *testing.B) (*idempotency.Consumer, *testenv.Requests) {
	direct := testkit.DynamoDB(b)
	app := testkit.Table(b, direct, "ports-app", "pk")
	idem := testkit.Table(b, direct, "ports-idem", "pk")
	reqs := &testenv.Requests{}
	db := testkit.DynamoDB(b, dynamodb.WithAPIOptions(reqs.Middleware))
	c, err := idempotency.New(db, idempotency.HandlerFunc(func(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
		return idempotency.Effect{idempotency.Put(app, map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "ITEM#" + ev.ID}, "data": &types.AttributeValueMemberS{Value: string(ev.Data)}})}, nil
	}), idempotency.Config{Name: "ports", Table: idem, CacheSize: -1, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return c, reqs
}

func data(key string, n int) []byte {
	d, _ := json.Marshal(map[string]any{"key": key, "n": n})
	return d
}

func sqsVariant(b *testing.B, mode string, noPacking bool, batches int) *portBench {
	c, reqs := engine(b)
	p, err := sqsbatch.NewFor(c.Engine(), sqsbatch.Config{Options: batch.Options{NoPacking: noPacking}})
	if err != nil {
		b.Fatal(err)
	}
	evs := make([]events.SQSEvent, batches)
	for i := range evs {
		for k := range batchSize {
			id := fmt.Sprintf("sqs-%s-%d-%d", mode, i, k)
			body, _ := cloudevent.Encode(cloudevent.Event{SpecVersion: "1.0", ID: id, Source: "bench", Type: "bench.added", Data: data(strconv.Itoa(k), i)})
			evs[i].Records = append(evs[i].Records, events.SQSMessage{MessageId: id, Body: string(body),
				EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:bench.fifo",
				Attributes:     map[string]string{"MessageGroupId": strconv.Itoa(k), "ApproximateReceiveCount": "1"}})
		}
	}
	return &portBench{name: "sqs-" + mode, mode: mode, requests: reqs, handle: func(i int) error {
		resp, _ := p.Handle(context.Background(), evs[i])
		if len(resp.BatchItemFailures) > 0 {
			return fmt.Errorf("failures %v", resp.BatchItemFailures)
		}
		return nil
	}}
}

func dynamoVariant(b *testing.B, mode string, noPacking bool, batches int) *portBench {
	c, reqs := engine(b)
	p, err := dynamodbbatch.New(c.Engine(), dynamodbbatch.Config{Options: batch.Options{NoPacking: noPacking}})
	if err != nil {
		b.Fatal(err)
	}
	evs := make([]events.DynamoDBEvent, batches)
	seq := 0
	for i := range evs {
		for k := range batchSize {
			seq++
			evs[i].Records = append(evs[i].Records, events.DynamoDBEventRecord{EventID: fmt.Sprintf("ddb-%s-%d-%d", mode, i, k),
				EventName: "MODIFY", EventSource: "aws:dynamodb", EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/bench/stream/x",
				Change: events.DynamoDBStreamRecord{SequenceNumber: fmt.Sprintf("%021d", seq), StreamViewType: "NEW_IMAGE",
					Keys: map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute(strconv.Itoa(k))},
					NewImage: map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute(strconv.Itoa(k)),
						"n": events.NewNumberAttribute(strconv.Itoa(i))}}})
		}
	}
	return &portBench{name: "dynamodb-" + mode, mode: mode, requests: reqs, handle: func(i int) error {
		resp, _ := p.Handle(context.Background(), evs[i])
		if len(resp.BatchItemFailures) > 0 {
			return fmt.Errorf("failures %v", resp.BatchItemFailures)
		}
		return nil
	}}
}

func kinesisVariant(b *testing.B, mode string, noPacking bool, batches int) *portBench {
	c, reqs := engine(b)
	p, err := kinesisbatch.New(c.Engine(), kinesisbatch.Config{Options: batch.Options{NoPacking: noPacking}})
	if err != nil {
		b.Fatal(err)
	}
	evs := make([]events.KinesisEvent, batches)
	seq := 0
	for i := range evs {
		for k := range batchSize {
			seq++
			s := fmt.Sprintf("4956816737333333333333333333333333333333333%013d", seq)
			evs[i].Records = append(evs[i].Records, events.KinesisEventRecord{EventID: "shardId-000000000000:" + s + "-" + mode,
				EventName: "aws:kinesis:record", EventSource: "aws:kinesis", EventSourceArn: "arn:aws:kinesis:us-east-1:000000000000:stream/bench",
				Kinesis: events.KinesisRecord{PartitionKey: strconv.Itoa(k), SequenceNumber: s, Data: data(strconv.Itoa(k), i)}})
		}
	}
	return &portBench{name: "kinesis-" + mode, mode: mode, requests: reqs, handle: func(i int) error {
		resp, _ := p.Handle(context.Background(), evs[i])
		if len(resp.BatchItemFailures) > 0 {
			return fmt.Errorf("failures %v", resp.BatchItemFailures)
		}
		return nil
	}}
}
