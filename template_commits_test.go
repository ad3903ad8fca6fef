package onceflow_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/cloudevent"
	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/port"
)

// recorded is a DynamoDB client that sends nothing: each call's input, as the SDK received it
// from the code, is kept, and every call succeeds with an empty answer (a first delivery:
// nothing stored yet).
type recorded struct {
	mu     sync.Mutex
	inputs []any
	client *dynamodb.Client
}

func newRecorded() *recorded {
	r := &recorded{}
	r.client = dynamodb.New(dynamodb.Options{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
		APIOptions: []func(*middleware.Stack) error{func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("record", func(ctx context.Context, in middleware.InitializeInput,
				_ middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				r.mu.Lock()
				r.inputs = append(r.inputs, in.Parameters)
				r.mu.Unlock()
				var out any
				switch in.Parameters.(type) {
				case *dynamodb.TransactWriteItemsInput:
					out = &dynamodb.TransactWriteItemsOutput{}
				case *dynamodb.PutItemInput:
					out = &dynamodb.PutItemOutput{}
				case *dynamodb.GetItemInput:
					out = &dynamodb.GetItemOutput{}
				case *dynamodb.UpdateItemInput:
					out = &dynamodb.UpdateItemOutput{}
				case *dynamodb.DeleteItemInput:
					out = &dynamodb.DeleteItemOutput{}
				}
				return middleware.InitializeOutput{Result: out}, middleware.Metadata{}, nil
			}), middleware.Before)
		}}})
	return r
}

// accesses are the item actions IAM authorises the recorded calls as.
func (r *recorded) accesses(t *testing.T) []access {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []access
	for _, in := range r.inputs {
		switch x := in.(type) {
		case *dynamodb.TransactWriteItemsInput:
			out = append(out, writes(t, x.TransactItems)...)
		case *dynamodb.PutItemInput:
			out = append(out, access{"dynamodb:PutItem", aws.ToString(x.TableName), pkOf(t, x.Item)})
		case *dynamodb.GetItemInput:
			out = append(out, access{"dynamodb:GetItem", aws.ToString(x.TableName), pkOf(t, x.Key)})
		case *dynamodb.UpdateItemInput:
			out = append(out, access{"dynamodb:UpdateItem", aws.ToString(x.TableName), pkOf(t, x.Key)})
		case *dynamodb.DeleteItemInput:
			out = append(out, access{"dynamodb:DeleteItem", aws.ToString(x.TableName), pkOf(t, x.Key)})
		default:
			t.Fatalf("the engine called %T, which this test does not authorise", in)
		}
	}
	return out
}

// engineCommit returns the item actions of the engine applying ev once, as consumer with
// handler and policy commits it (the handler's effects, the record and, under HoldGroup, the
// check of the group's hold): the requests the code sends, not a list the test expects.
func engineCommit(t *testing.T, consumer string, handler idempotency.Handler, policy idempotency.GroupPolicy, ev cloudevent.Event) []access {
	t.Helper()
	db := newRecorded()
	c, err := idempotency.New(db.client, handler, idempotency.Config{Name: consumer, Table: "IdempotencyTable", AfterDeadLetter: policy,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Apply(context.Background(), ev, port.Delivery{MessageID: "m-1", ReceiveCount: 1, Group: ev.Subject})
	if err != nil || res.Outcome != idempotency.Applied {
		t.Fatalf("apply %s: %+v, %v", ev.ID, res, err)
	}
	return db.accesses(t)
}
