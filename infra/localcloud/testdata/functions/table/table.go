// Package table is the table the test functions record what they see in: TABLE_NAME, reached
// with the SDK's default configuration, which the local cloud sets for each function.
package table

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Table is the table TABLE_NAME, keyed by the string pk. It is safe for concurrent use.
type Table struct {
	db   *dynamodb.Client
	name string
}

// FromEnv returns TABLE_NAME; it panics when the SDK's configuration does not load, which
// fails the function's init.
func FromEnv() Table {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		panic(err)
	}
	return Table{db: dynamodb.NewFromConfig(cfg), name: os.Getenv("TABLE_NAME")}
}

// Put writes an item of string attributes; item holds its key pk.
func (t Table) Put(ctx context.Context, item map[string]string) error {
	av := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		av[k] = &types.AttributeValueMemberS{Value: v}
	}
	_, err := t.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(t.name), Item: av})
	return err
}

// Has reports whether the item with key pk exists, reading consistently.
func (t Table) Has(ctx context.Context, pk string) (bool, error) {
	out, err := t.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(t.name), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}}})
	if err != nil {
		return false, err
	}
	return out.Item != nil, nil
}

// Count sets the string attributes of the item with key pk and adds one to its numeric
// attribute "deliveries": how many times a function handled it.
func (t Table) Count(ctx context.Context, pk string, attrs map[string]string) error {
	set := make([]string, 0, len(attrs))
	values := map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}}
	names := map[string]string{}
	i := 0
	for k, v := range attrs {
		set = append(set, fmt.Sprintf("#a%d = :v%d", i, i))
		names[fmt.Sprintf("#a%d", i)] = k
		values[fmt.Sprintf(":v%d", i)] = &types.AttributeValueMemberS{Value: v}
		i++
	}
	expr := "ADD deliveries :one"
	if len(set) > 0 {
		expr = "SET " + strings.Join(set, ", ") + " " + expr
	}
	in := &dynamodb.UpdateItemInput{TableName: aws.String(t.name), UpdateExpression: aws.String(expr),
		Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}},
		ExpressionAttributeValues: values}
	if len(names) > 0 {
		in.ExpressionAttributeNames = names
	}
	_, err := t.db.UpdateItem(ctx, in)
	return err
}
