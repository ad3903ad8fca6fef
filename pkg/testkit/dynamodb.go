package testkit

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB returns a client for the DynamoDB at $DYNAMODB_ENDPOINT (Amazon DynamoDB Local),
// with fixed local credentials and region; opts adjust it. See Emulator for when it skips or
// fails the test.
func DynamoDB(tb testing.TB, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	url := Emulator(tb, EndpointVariable)
	return dynamodb.NewFromConfig(Config(), append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(url)
	}}, opts...)...)
}

var seq atomic.Int64

// Name returns prefix made unique in this process and across runs, for tables.
func Name(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1e9, seq.Add(1))
}

// Table creates an on-demand table named prefix and a unique suffix, whose string key is hash
// (and rangeKey, if given), waits until it is active and deletes it when the test ends. It
// returns the table's name.
func Table(tb testing.TB, db *dynamodb.Client, prefix, hash string, rangeKey ...string) string {
	tb.Helper()
	return CreateTable(tb, db, keyed(prefix, hash, rangeKey...))
}

// keyed is the input that creates a table named name whose string key is hash (and rangeKey,
// if given).
func keyed(name, hash string, rangeKey ...string) *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{TableName: aws.String(name)}
	for i, k := range append([]string{hash}, rangeKey...) {
		kind := types.KeyTypeHash
		if i > 0 {
			kind = types.KeyTypeRange
		}
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String(k), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(k), KeyType: kind})
	}
	return in
}

// CreateTable creates the table in describes (indexes, other key types), on demand unless it
// says otherwise, under its TableName made unique; it waits until the table is active, deletes
// it when the test ends, and returns its name.
func CreateTable(tb testing.TB, db *dynamodb.Client, in *dynamodb.CreateTableInput) string {
	tb.Helper()
	copied := *in
	name := Name(aws.ToString(in.TableName))
	copied.TableName = aws.String(name)
	if copied.BillingMode == "" && copied.ProvisionedThroughput == nil {
		copied.BillingMode = types.BillingModePayPerRequest
	}
	ctx := context.Background()
	if _, err := db.CreateTable(ctx, &copied); err != nil {
		tb.Fatalf("create table %s: %v", name, err)
	}
	tb.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 30*time.Second); err != nil {
		tb.Fatalf("wait for table %s: %v", name, err)
	}
	return name
}

// IdempotencyTable creates the engine's idempotency table (hash key pk, a string; TTL on
// expiresAt), as template.yaml declares it, for the test, and returns its name.
func IdempotencyTable(tb testing.TB, db *dynamodb.Client) string {
	tb.Helper()
	name := Table(tb, db, "idempotency", "pk")
	_, err := db.UpdateTimeToLive(context.Background(), &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true)}})
	if err != nil {
		tb.Fatalf("enable TTL on %s: %v", name, err)
	}
	return name
}
