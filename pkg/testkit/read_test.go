package testkit_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/pkg/batch"
	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/metrics"
	"github.com/onceflow/onceflow/pkg/sqsbatch"
	"github.com/onceflow/onceflow/pkg/testkit"
	"github.com/onceflow/onceflow/pkg/testkit/fault"
)

// inventory is an item whose stock a reservation reads.
type inventory struct {
	SKU      string `dynamodbav:"pk"`
	Stock    int    `dynamodbav:"stock"`
	Reserved int    `dynamodbav:"reserved"`
}

type reservation struct {
	SKU      string `json:"sku"`
	Quantity int    `json:"quantity"`
}

// reserving is the inventory-reservation consumer a team writes: it reads the item's stock and
// decides the reservation from it (reserved + quantity must not exceed stock). A reservation
// that does not fit writes nothing but the record.
func reserving(table string) *idempotency.Router {
	r := idempotency.NewRouter()
	idempotency.RouteReading(r, "stock.reserve", func(ctx context.Context, ev cloudevent.Event, d reservation) (idempotency.Effect, error) {
		var item inventory
		if _, err := idempotency.Read(ctx, table, map[string]string{"pk": d.SKU}, &item); err != nil {
			return nil, err
		}
		if item.Reserved+d.Quantity > item.Stock {
			return idempotency.Effect{}, nil
		}
		return idempotency.Effect{idempotency.Update(table, map[string]string{"pk": d.SKU},
			expression.Set(expression.Name("reserved"), expression.Value(item.Reserved+d.Quantity)))}, nil
	})
	return r
}

// readRace is a reservation consumer on DynamoDB Local whose commits a concurrent writer races.
type readRace struct {
	db, writer *dynamodb.Client
	table      string
	races      atomic.Int64 // how many commits the writer still races, adding 1 to reserved before each
	q          *testkit.Queue
}

func newReadRace(t *testing.T, stock int) *readRace {
	r := &readRace{writer: testkit.DynamoDB(t), q: testkit.FIFO("reserve")}
	r.table = testkit.Table(t, r.writer, "inventory", "pk")
	r.db = testkit.DynamoDB(t, dynamodb.WithAPIOptions(fault.RaceCommits(1<<30, func(ctx context.Context, _ *dynamodb.TransactWriteItemsInput) error {
		if r.races.Add(-1) < 0 {
			r.races.Store(0)
			return nil
		}
		_, err := r.writer.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(r.table), Key: r.key("sku-1"),
			UpdateExpression: aws.String("ADD reserved :one"), ExpressionAttributeValues: r.values(map[string]int{":one": 1})})
		return err
	})))
	item, err := attributevalue.MarshalMap(inventory{SKU: "sku-1", Stock: stock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.writer.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(r.table), Item: item}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *readRace) key(sku string) map[string]types.AttributeValue {
	return r.values(map[string]string{"pk": sku})
}

func (r *readRace) values(v any) map[string]types.AttributeValue {
	m, _ := attributevalue.MarshalMap(v)
	return m
}

func (r *readRace) message(t *testing.T, group, id string, quantity int) events.SQSMessage {
	t.Helper()
	ev, err := cloudevent.New(id, "shop", "stock.reserve", "sku-1", time.Now(), reservation{SKU: "sku-1", Quantity: quantity})
	if err != nil {
		t.Fatal(err)
	}
	body, err := cloudevent.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return r.q.Message(group, string(body))
}

func (r *readRace) reserved(t *testing.T) int {
	t.Helper()
	out, err := r.writer.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(r.table), Key: r.key("sku-1"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var item inventory
	if err := attributevalue.UnmarshalMap(out.Item, &item); err != nil {
		t.Fatal(err)
	}
	return item.Reserved
}

// Two reservations of one item in one batch (two groups, packed into shared transactions) and a
// writer racing the commits: every reservation is decided on what the item holds when it
// commits, so none is lost and none exceeds the stock; under either group policy.
func TestConsumer_reservations_racing_a_writer_are_decided_on_fresh_state(t *testing.T) {
	for name, policy := range map[string]idempotency.GroupPolicy{"GoOn": idempotency.GoOn, "HoldGroup": idempotency.HoldGroup} {
		t.Run(name, func(t *testing.T) {
			r := newReadRace(t, 10)
			r.races.Store(1) // another reservation of 1, before the first commit
			c := testkit.NewConsumer(t, r.db, reserving(r.table), idempotency.Config{Name: "reserve", AfterDeadLetter: policy}, sqsbatch.Config{})
			a, b := r.message(t, "order-a", "reserve-a", 4), r.message(t, "order-b", "reserve-b", 4)
			if failed := c.Receive(testkit.Batch(a, b)); len(failed) != 0 {
				t.Fatalf("failed %v; want both applied", failed)
			}
			if got := r.reserved(t); got != 9 {
				t.Errorf("reserved %d; want 9 (4 + 4 + the writer's 1): no reservation lost", got)
			}
			if c.Count(metrics.Applied) != 2 || c.Count(metrics.Redecided) < 1 {
				t.Errorf("applied %v, redecided %v; want 2 applied, at least 1 decided again", c.Count(metrics.Applied), c.Count(metrics.Redecided))
			}
		})
	}
}

// A read that keeps changing exhausts the bound: the message fails, is delivered again, and is
// never dead-lettered for it, however often; once the writer stops, it applies.
func TestConsumer_a_contended_read_is_never_dead_lettered(t *testing.T) {
	r := newReadRace(t, 100)
	r.races.Store(1 << 30)
	c := testkit.NewConsumer(t, r.db, reserving(r.table), idempotency.Config{Name: "reserve", Redecisions: 1},
		sqsbatch.Config{Options: batch.Options{MaxAttempts: 1}})
	m := r.message(t, "order-a", "reserve-a", 4)
	for i := range 3 {
		if failed := c.Receive(testkit.Batch(m)); len(failed) != 1 {
			t.Fatalf("receive %d: failed %v; want the message failed, to be delivered again", i+1, failed)
		}
		m = testkit.Again(m)
	}
	if dead := c.DeadLetters(); len(dead) != 0 {
		t.Fatalf("dead-lettered %v; want none: contention is no failure of the message", dead[0].Reason)
	}
	before := r.reserved(t)
	r.races.Store(0)
	if failed := c.Receive(testkit.Batch(m)); len(failed) != 0 {
		t.Fatalf("failed %v once the writer stopped; want applied", failed)
	}
	if got := r.reserved(t); got != before+4 {
		t.Errorf("reserved %d, want %d", got, before+4)
	}
	if got := c.Count(metrics.Redecided); got != 3 {
		t.Errorf("Redecided %v, want 3 (once per contended delivery)", got)
	}
}
