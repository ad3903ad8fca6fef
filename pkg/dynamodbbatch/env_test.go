package dynamodbbatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"

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

// streamEnv is a source table whose stream (DynamoDB Local's) the port consumes, and a totals
// table the consumer's effects write: for each source item, the list of the amounts applied,
// in the order they were applied.
type streamEnv struct {
	db       *dynamodb.Client
	requests *testenv.Requests
	source   string
	arn      string
	totals   string
	idem     string

	mu    sync.Mutex
	fails map[string]error // "<item>/<n>" -> the error its next Decide returns (once)
}

func newStreamEnv(t *testing.T) *streamEnv {
	t.Helper()
	e := &streamEnv{db: testkit.DynamoDB(t), requests: &testenv.Requests{}, fails: map[string]error{}}
	e.source, e.arn = testkit.StreamTable(t, e.db, "app")
	e.totals = testkit.Table(t, e.db, "totals", "pk")
	e.idem = testkit.IdempotencyTable(t, e.db)
	return e
}

// write puts item's amount n: the stream gets an INSERT, then MODIFYs.
func (e *streamEnv) write(t *testing.T, item string, n int) {
	t.Helper()
	_, err := e.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.source), Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: item}, "sk": &types.AttributeValueMemberS{Value: "ITEM"},
		"n": &types.AttributeValueMemberN{Value: strconv.Itoa(n)}}})
	if err != nil {
		t.Fatal(err)
	}
}

// consumer is the idempotent consumer of the stream, its DynamoDB calls counted.
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
	var ch events.DynamoDBStreamRecord
	if err := json.Unmarshal(ev.Data, &ch); err != nil {
		return nil, cloudevent.Malformed("data", "%v", err)
	}
	item := ch.Keys["pk"].String()
	n, err := strconv.Atoi(ch.NewImage["n"].Number())
	if err != nil {
		return nil, cloudevent.Malformed("data.n", "%v", err)
	}
	e.mu.Lock()
	fail := e.fails[fmt.Sprintf("%s/%d", item, n)]
	delete(e.fails, fmt.Sprintf("%s/%d", item, n))
	e.mu.Unlock()
	switch {
	case fail != nil:
		return nil, fail
	case n < 0:
		return nil, idempotency.Permanent(errors.New("negative amount"))
	}
	return idempotency.Effect{idempotency.Update(e.totals, map[string]string{"pk": item},
		expression.Set(expression.Name("applied"), expression.ListAppend(
			expression.IfNotExists(expression.Name("applied"), expression.Value([]int{})), expression.Value([]int{n}))))}, nil
}

// applied returns the amounts applied to item, in order.
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

// records reads the stream's records as Lambda delivers them.
func (e *streamEnv) records(t *testing.T) []events.DynamoDBEventRecord {
	t.Helper()
	return testkit.StreamRecords(t, testkit.Streams(t), e.arn)
}

// from is the batch Lambda delivers again after a partial failure: the records from the
// reported sequence number on.
func from(recs []events.DynamoDBEventRecord, seq string) []events.DynamoDBEventRecord {
	i := slices.IndexFunc(recs, func(r events.DynamoDBEventRecord) bool { return r.Change.SequenceNumber == seq })
	if i < 0 {
		return nil
	}
	return recs[i:]
}
