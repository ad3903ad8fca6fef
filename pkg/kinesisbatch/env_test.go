package kinesisbatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/testenv"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// stream is a Kinesis stream of kinesalite of one shard, as a Lambda batch is of one shard.
type stream struct {
	kin  kinesalite
	name string
	arn  string
}

// streamEnv is a stream and a totals table the consumer's effects write: per item, the
// amounts applied, in order.
type streamEnv struct {
	*stream
	db       *dynamodb.Client
	requests *testenv.Requests
	totals   string
	idem     string

	mu    sync.Mutex
	fails map[string]error // "<item>/<n>" -> the error its next Decide returns (once)
}

// amount is a record's data.
type amount struct {
	Item string `json:"item"`
	N    int    `json:"n"`
}

func newStreamEnv(t *testing.T) *streamEnv {
	t.Helper()
	e := &streamEnv{stream: newStream(t), db: testkit.DynamoDB(t), requests: &testenv.Requests{}, fails: map[string]error{}}
	e.totals = testkit.Table(t, e.db, "totals", "pk")
	e.idem = testkit.IdempotencyTable(t, e.db)
	return e
}

// newStream creates a stream for the test, deleted after it.
func newStream(t *testing.T) *stream {
	t.Helper()
	s := &stream{kin: kinesalite{url: testkit.Emulator(t, testkit.KinesisEndpointVariable)}, name: testkit.Name("amounts")}
	s.kin.call(t, "CreateStream", map[string]any{"StreamName": s.name, "ShardCount": 1}, nil)
	t.Cleanup(func() { s.kin.call(t, "DeleteStream", map[string]string{"StreamName": s.name}, nil) })
	testkit.Eventually(t, 20*time.Second, func() error {
		if d := s.kin.describe(t, s.name); d.StreamDescription.StreamStatus != "ACTIVE" {
			return fmt.Errorf("stream %s is %s, not ACTIVE", s.name, d.StreamDescription.StreamStatus)
		}
		return nil
	})
	s.arn = s.kin.describe(t, s.name).StreamDescription.StreamARN
	return s
}

// put puts data under partition key key.
func (s *stream) put(t *testing.T, key string, data []byte) {
	t.Helper()
	s.kin.call(t, "PutRecord", map[string]any{"StreamName": s.name, "PartitionKey": key, "Data": data}, nil)
}

// write puts item's amount n, keyed by item.
func (e *streamEnv) write(t *testing.T, item string, n int) {
	t.Helper()
	data, _ := json.Marshal(amount{Item: item, N: n})
	e.put(t, item, data)
}

// records reads the shard's records and shapes them as Lambda's Kinesis event source
// mapping delivers them.
func (s *stream) records(t *testing.T) []events.KinesisEventRecord {
	t.Helper()
	shard := s.kin.describe(t, s.name).StreamDescription.Shards[0].ShardId
	var it struct{ ShardIterator string }
	s.kin.call(t, "GetShardIterator", map[string]string{"StreamName": s.name, "ShardId": shard, "ShardIteratorType": "TRIM_HORIZON"}, &it)
	var out struct{ Records []record }
	s.kin.call(t, "GetRecords", map[string]string{"ShardIterator": it.ShardIterator}, &out)
	recs := make([]events.KinesisEventRecord, 0, len(out.Records))
	for _, r := range out.Records {
		recs = append(recs, events.KinesisEventRecord{AwsRegion: "us-east-1", EventID: shard + ":" + r.SequenceNumber,
			EventName: "aws:kinesis:record", EventSource: "aws:kinesis", EventSourceArn: s.arn, EventVersion: "1.0",
			Kinesis: events.KinesisRecord{KinesisSchemaVersion: "1.0", PartitionKey: r.PartitionKey,
				SequenceNumber: r.SequenceNumber, Data: r.Data, ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: r.arrival()}}})
	}
	return recs
}

func (e *streamEnv) consumer(t *testing.T, policy idempotency.GroupPolicy) *idempotency.Consumer {
	t.Helper()
	db := testkit.DynamoDB(t, dynamodb.WithAPIOptions(e.requests.Middleware))
	c, err := idempotency.New(db, idempotency.HandlerFunc(e.decide), idempotency.Config{Name: "totals", Table: e.idem,
		CacheSize: -1, AfterDeadLetter: policy, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *streamEnv) failOnce(item string, n int, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fails[fmt.Sprintf("%s/%d", item, n)] = err
}

// decide appends the record's amount to its item's list; a negative amount can never succeed.
func (e *streamEnv) decide(_ context.Context, ev cloudevent.Event) (idempotency.Effect, error) {
	var a amount
	if err := json.Unmarshal(ev.Data, &a); err != nil {
		return nil, cloudevent.Malformed("data", "%v", err)
	}
	k := fmt.Sprintf("%s/%d", a.Item, a.N)
	e.mu.Lock()
	fail := e.fails[k]
	delete(e.fails, k)
	e.mu.Unlock()
	switch {
	case fail != nil:
		return nil, fail
	case a.N < 0:
		return nil, idempotency.Permanent(errors.New("negative amount"))
	}
	return idempotency.Effect{idempotency.Update(e.totals, map[string]string{"pk": a.Item},
		expression.Set(expression.Name("applied"), expression.ListAppend(
			expression.IfNotExists(expression.Name("applied"), expression.Value([]int{})), expression.Value([]int{a.N}))))}, nil
}

func (e *streamEnv) applied(t *testing.T, item string) []int {
	t.Helper()
	out, err := e.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(e.totals),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: item}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Applied []int }
	if err := attributevalue.UnmarshalMap(out.Item, &got); err != nil {
		t.Fatal(err)
	}
	return got.Applied
}

func from(recs []events.KinesisEventRecord, seq string) []events.KinesisEventRecord {
	i := slices.IndexFunc(recs, func(r events.KinesisEventRecord) bool { return r.Kinesis.SequenceNumber == seq })
	if i < 0 {
		return nil
	}
	return recs[i:]
}
