package gatekeeper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/onceflow/onceflow/infra/iam"
)

// attributeValue is a DynamoDB attribute value of a key: its string form is what the
// dynamodb:LeadingKeys condition key holds (a string, a number's digits, a binary's base64).
type attributeValue struct {
	S, N, B *string
}

func (v attributeValue) text() (string, bool) {
	for _, s := range []*string{v.S, v.N, v.B} {
		if s != nil {
			return *s, true
		}
	}
	return "", false
}

type item = map[string]attributeValue

type keyed struct {
	TableName string
	Key, Item item
}

// ddbRequest holds the fields of every DynamoDB and DynamoDB Streams request the gatekeeper
// reads; other fields are not decoded.
type ddbRequest struct {
	keyed
	IndexName                 string
	KeyConditionExpression    string
	KeyConditions             map[string]struct{ AttributeValueList []attributeValue }
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues item
	TransactItems             []struct{ Put, Update, Delete, ConditionCheck, Get *keyed }
	RequestItems              map[string]json.RawMessage
	StreamArn                 string
	ShardIterator             string
}

// ddbCall is one DynamoDB call being read: the key schemas it needed and could not get fail it.
type ddbCall struct {
	g    *Gatekeeper
	ctx  context.Context
	errs []error
}

// dynamodbRequests names the authorisations of a DynamoDB or DynamoDB Streams call: one per
// item of a transaction, by its own action; one per table of a batch; the table's (or the
// index's) ARN; the partition keys it touches as dynamodb:LeadingKeys.
func (g *Gatekeeper) dynamodbRequests(ctx context.Context, r *http.Request, body []byte) ([]iam.Request, error) {
	op := target(r)
	var in ddbRequest
	if len(body) > 0 {
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, fmt.Errorf("dynamodb %s: %w", op, err)
		}
	}
	if strings.HasPrefix(r.Header.Get("X-Amz-Target"), "DynamoDBStreams") {
		return g.streamsRequests(op, in), nil
	}
	c := &ddbCall{g: g, ctx: ctx}
	reqs, err := c.requests(op, in)
	if err == nil {
		err = errors.Join(c.errs...)
	}
	if err != nil {
		return nil, fmt.Errorf("dynamodb %s: %w", op, err)
	}
	return reqs, nil
}

func (c *ddbCall) requests(op string, in ddbRequest) ([]iam.Request, error) {
	switch op {
	case "PutItem":
		return []iam.Request{c.item(op, in.TableName, in.Item)}, nil
	case "GetItem", "UpdateItem", "DeleteItem":
		return []iam.Request{c.item(op, in.TableName, in.Key)}, nil
	case "Query", "Scan":
		q := iam.Request{Action: "dynamodb:" + op, Resource: c.g.tableARN(in.TableName)}
		if in.IndexName != "" {
			q.Resource += "/index/" + in.IndexName
		}
		if op == "Query" {
			q.Context = leading(c.queryKeys(in))
		}
		return []iam.Request{q}, nil
	case "TransactWriteItems", "TransactGetItems":
		var out []iam.Request
		for i, ti := range in.TransactItems {
			switch {
			case ti.Put != nil:
				out = append(out, c.item("PutItem", ti.Put.TableName, ti.Put.Item))
			case ti.Update != nil:
				out = append(out, c.item("UpdateItem", ti.Update.TableName, ti.Update.Key))
			case ti.Delete != nil:
				out = append(out, c.item("DeleteItem", ti.Delete.TableName, ti.Delete.Key))
			case ti.ConditionCheck != nil:
				out = append(out, c.item("ConditionCheckItem", ti.ConditionCheck.TableName, ti.ConditionCheck.Key))
			case ti.Get != nil:
				out = append(out, c.item("GetItem", ti.Get.TableName, ti.Get.Key))
			default:
				return nil, fmt.Errorf("item %d has no operation", i)
			}
		}
		return out, nil
	case "BatchWriteItem", "BatchGetItem":
		return c.batch(op, in.RequestItems)
	case "ListTables", "DescribeLimits", "DescribeEndpoints":
		return []iam.Request{{Action: "dynamodb:" + op, Resource: "*"}}, nil
	}
	if in.TableName == "" {
		return nil, errors.New("no TableName, and the gatekeeper does not know the operation's resource")
	}
	// DescribeTable, CreateTable, UpdateTimeToLive, ...: the table itself.
	return []iam.Request{{Action: "dynamodb:" + op, Resource: c.g.tableARN(in.TableName)}}, nil
}

// item is the authorisation of an action on one item of a table, by its key.
func (c *ddbCall) item(action, table string, key item) iam.Request {
	return iam.Request{Action: "dynamodb:" + action, Resource: c.g.tableARN(table), Context: leading(c.leadingKeys(table, key))}
}

func leading(keys []string) map[string][]string {
	return map[string][]string{"dynamodb:leadingkeys": keys}
}

// batch authorises a batch call once per table, with every key it touches there.
func (c *ddbCall) batch(op string, tables map[string]json.RawMessage) ([]iam.Request, error) {
	var out []iam.Request
	for _, table := range sortedKeys(tables) {
		var keys []item
		if op == "BatchWriteItem" {
			var writes []struct {
				PutRequest    *struct{ Item item }
				DeleteRequest *struct{ Key item }
			}
			if err := json.Unmarshal(tables[table], &writes); err != nil {
				return nil, fmt.Errorf("%s: %w", table, err)
			}
			for _, w := range writes {
				if w.PutRequest != nil {
					keys = append(keys, w.PutRequest.Item)
				}
				if w.DeleteRequest != nil {
					keys = append(keys, w.DeleteRequest.Key)
				}
			}
		} else {
			var gets struct{ Keys []item }
			if err := json.Unmarshal(tables[table], &gets); err != nil {
				return nil, fmt.Errorf("%s: %w", table, err)
			}
			keys = gets.Keys
		}
		lead := []string{}
		for _, k := range keys {
			lead = append(lead, c.leadingKeys(table, k)...)
		}
		out = append(out, iam.Request{Action: "dynamodb:" + op, Resource: c.g.tableARN(table), Context: leading(lead)})
	}
	return out, nil
}

// leadingKeys returns the partition key value of an item or key of table.
func (c *ddbCall) leadingKeys(table string, it item) []string {
	t, err := c.g.table(c.ctx, table)
	if err != nil {
		c.errs = append(c.errs, err)
		return nil
	}
	if v, ok := it[t.HashKey].text(); ok {
		return []string{v}
	}
	return []string{}
}

// queryKeys returns the partition key a Query names: in its KeyConditionExpression (the
// equality on the table's or index's partition key, either way round, names and values
// substituted) or in its legacy KeyConditions. A Query whose partition key value it cannot read
// (DynamoDB refuses a Query without one) is an error: it is never authorised with no leading
// keys, which a ForAllValues condition would let through.
func (c *ddbCall) queryKeys(in ddbRequest) []string {
	t, err := c.g.table(c.ctx, in.TableName)
	if err != nil {
		c.errs = append(c.errs, err)
		return nil
	}
	attr := t.HashKey
	if in.IndexName != "" {
		attr = t.Indexes[in.IndexName]
	}
	if kc, ok := in.KeyConditions[attr]; ok && len(kc.AttributeValueList) > 0 {
		if v, ok := kc.AttributeValueList[0].text(); ok {
			return []string{v}
		}
	}
	if name, ok := partitionKeyValue(in.KeyConditionExpression, attr, in.ExpressionAttributeNames); ok {
		if v, ok := in.ExpressionAttributeValues[name].text(); ok {
			return []string{v}
		}
	}
	c.errs = append(c.errs, fmt.Errorf("no value of the partition key %s in the key condition %q", attr, in.KeyConditionExpression))
	return nil
}

// streamsRequests authorises a DynamoDB Streams call on its stream: named, or the one its
// shard iterator starts with (DynamoDB's iterators begin with their stream's ARN and "|").
func (g *Gatekeeper) streamsRequests(op string, in ddbRequest) []iam.Request {
	stream := in.StreamArn
	if stream == "" && in.ShardIterator != "" {
		stream, _, _ = strings.Cut(in.ShardIterator, "|")
		if !strings.HasPrefix(stream, "arn:") {
			stream = "*" // an iterator of another shape: only a policy on every stream allows it
		}
	}
	if stream == "" {
		stream = "*" // ListStreams
	}
	if stream != "*" {
		stream = g.cfg.CanonicalARN(stream)
	}
	return []iam.Request{{Action: "dynamodb:" + op, Resource: stream}}
}

func (g *Gatekeeper) tableARN(name string) string {
	if strings.HasPrefix(name, "arn:") {
		return g.cfg.CanonicalARN(name)
	}
	return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", g.cfg.Region, g.cfg.Account, name)
}

// table returns the key schema of a table (by name or ARN), asking cfg.Table once per table.
func (g *Gatekeeper) table(ctx context.Context, name string) (Table, error) {
	if _, after, ok := strings.Cut(name, ":table/"); ok {
		name = after
	}
	if t, ok := g.tables.Load(name); ok {
		return t.(Table), nil
	}
	if g.cfg.Table == nil {
		return Table{}, fmt.Errorf("table %s: no key schema (Config.Table)", name)
	}
	t, err := g.cfg.Table(ctx, name)
	if err != nil {
		return Table{}, fmt.Errorf("table %s: key schema: %w", name, err)
	}
	g.tables.Store(name, t)
	return t, nil
}
