package testenv

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Items returns how many items table holds (a consistent scan of one page: a test's table).
func Items(tb testing.TB, db *dynamodb.Client, table string) int {
	tb.Helper()
	out, err := db.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		tb.Fatalf("scan %s: %v", table, err)
	}
	return len(out.Items)
}
