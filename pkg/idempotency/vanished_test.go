package idempotency_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/operator"
)

// A record that vanished between a failed condition and the read that follows (TTL deleted
// it, or its owner released it) is a transient state, never a conflict.
func TestConsumer_a_record_vanished_after_its_condition_failed_is_transient(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := applytest.Unique(t)
	msg := applytest.Message(t, "m1", id, "test.counted", applytest.Counted{Counter: id, By: 1})
	if _, err := applytest.Process(context.Background(), f.Consumer(t, "counter"), msg); err != nil {
		t.Fatal(err)
	}
	key := operator.Key("counter", id)
	db := applytest.Faulty(t, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if _, ok := in.Parameters.(*dynamodb.GetItemInput); ok { // the record vanishes just before the read
			if _, err := f.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &f.Records,
				Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}}}); err != nil {
				return middleware.InitializeOutput{}, middleware.Metadata{}, err
			}
		}
		out, md, err := next.HandleInitialize(ctx, in)
		var tce *types.TransactionCanceledException
		if errors.As(err, &tce) { // ALL_OLD not honoured: the engine must read the record
			for i := range tce.CancellationReasons {
				tce.CancellationReasons[i].Item = nil
			}
		}
		return out, md, err
	})
	resent := msg // a first delivery (a redelivery reads the record before its handler instead)
	resent.MessageId = "m1-resent"
	res, err := applytest.Process(context.Background(), f.consumerWith(t, db, "counter"), resent)
	if res.Outcome == idempotency.Conflict || idempotency.IsPermanent(err) || err == nil {
		t.Errorf("redelivery whose record vanished = %+v, %v; want a transient failure, not a conflict", res, err)
	}
}

// consumerWith returns the fixture's counter consumer reaching DynamoDB through db.
func (f *fixture) consumerWith(t *testing.T, db idempotency.DB, name string) *idempotency.Consumer {
	t.Helper()
	c, err := idempotency.New(db, f.Router(), idempotency.Config{Name: name, Table: f.Records, CacheSize: -1,
		Logger: f.Logger})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
