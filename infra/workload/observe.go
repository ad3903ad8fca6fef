package workload

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/operator"
)

// depth is what SQS says a queue holds.
type depth struct{ visible, inFlight, delayed int }

func (d depth) total() int { return d.visible + d.inFlight + d.delayed }

func queueDepth(ctx context.Context, client *sqs.Client, url string) (depth, error) {
	out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		return depth{}, fmt.Errorf("queue attributes of %s: %w", url, err)
	}
	n := func(k sqstypes.QueueAttributeName) int { v, _ := strconv.Atoi(out.Attributes[string(k)]); return v }
	return depth{n(sqstypes.QueueAttributeNameApproximateNumberOfMessages),
		n(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible),
		n(sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed)}, nil
}

// scan returns every item of a table, read consistently.
func scan(ctx context.Context, ddb *dynamodb.Client, table string) ([]map[string]ddbtypes.AttributeValue, error) {
	var items []map[string]ddbtypes.AttributeValue
	p := dynamodb.NewScanPaginator(ddb, &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", table, err)
		}
		items = append(items, page.Items...)
	}
	return items, nil
}

// tables is what the verification reads of the tables: each read once, whole, after the
// pipeline drained.
type tables struct {
	app, idem []map[string]ddbtypes.AttributeValue
	recs      map[string]operator.Record // the idempotency records of idem, by key
}

func readTables(ctx context.Context, ddb *dynamodb.Client, app, idem string) (tables, error) {
	var t tables
	var err error
	if t.app, err = scan(ctx, ddb, app); err != nil {
		return t, err
	}
	if t.idem, err = scan(ctx, ddb, idem); err != nil {
		return t, err
	}
	t.recs, err = recordsOf(t.idem)
	return t, err
}

// recordsOf returns the idempotency records among items by key, only finished ones (a lease
// in progress is not a record of an outcome yet).
func recordsOf(items []map[string]ddbtypes.AttributeValue) (map[string]operator.Record, error) {
	out := make(map[string]operator.Record, len(items))
	for _, item := range items {
		var r operator.Record
		if err := attributevalue.UnmarshalMap(item, &r); err != nil {
			return nil, fmt.Errorf("decode idempotency record: %w", err)
		}
		if finished(r) {
			out[r.Key] = r
		}
	}
	return out, nil
}

func finished(r operator.Record) bool { return r.Status == "" || r.Status == operator.StatusCompleted }

// found reads the records of keys that it has not found yet, and adds those it finds (finished)
// to seen: a record, once written, stays (TTL does not run here), so over a drain each key is
// read until it is found, and never after. Reads are consistent, 100 keys a call.
func found(ctx context.Context, ddb *dynamodb.Client, table string, keys []string, seen map[string]bool) error {
	proj, err := expression.NewBuilder().WithProjection(expression.NamesList(expression.Name("pk"), expression.Name("status"))).Build()
	if err != nil {
		return err
	}
	for chunk := range slices.Chunk(keys, 100) {
		batch := &ddbtypes.KeysAndAttributes{ConsistentRead: aws.Bool(true), ProjectionExpression: proj.Projection(),
			ExpressionAttributeNames: proj.Names()}
		for _, k := range chunk {
			batch.Keys = append(batch.Keys, map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: k}})
		}
		for pass := 0; len(batch.Keys) > 0; pass++ {
			if pass > 0 { // what DynamoDB left unprocessed, after a pause
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Duration(min(pass, 10)) * 50 * time.Millisecond):
				}
			}
			out, err := ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]ddbtypes.KeysAndAttributes{table: *batch}})
			if err != nil {
				return fmt.Errorf("read records of %s: %w", table, err)
			}
			for _, item := range out.Responses[table] {
				var r operator.Record
				if err := attributevalue.UnmarshalMap(item, &r); err != nil {
					return fmt.Errorf("decode idempotency record: %w", err)
				}
				if finished(r) {
					seen[r.Key] = true
				}
			}
			batch.Keys = out.UnprocessedKeys[table].Keys
		}
	}
	return nil
}

// logOffsets returns the current size of every log file of function, so that metrics are
// counted from now on (logs are appended across runs and restarts).
func logOffsets(dir, function string) map[string]int64 {
	files, _ := filepath.Glob(filepath.Join(dir, function+"-*.log"))
	out := map[string]int64{}
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			out[f] = st.Size()
		}
	}
	return out
}

// emfCounts sums the Count metrics of the embedded-metric-format lines that function's
// environments logged after offsets.
func emfCounts(dir, function string, offsets map[string]int64) (map[string]float64, error) {
	files, _ := filepath.Glob(filepath.Join(dir, function+"-*.log"))
	sums := map[string]float64{}
	for _, name := range files {
		if err := emfFile(name, offsets[name], sums); err != nil {
			return nil, err
		}
	}
	return sums, nil
}

func emfFile(name string, offset int64, sums map[string]float64) error {
	return eachLine(name, offset, func(line string) bool {
		i := strings.IndexByte(line, '{')
		if i < 0 || !strings.Contains(line, `"CloudWatchMetrics"`) {
			return true
		}
		var doc struct {
			AWS struct {
				CloudWatchMetrics []struct {
					Metrics []struct{ Name, Unit string }
				}
			} `json:"_aws"`
		}
		if json.Unmarshal([]byte(line[i:]), &doc) != nil {
			return true
		}
		var values map[string]any
		_ = json.Unmarshal([]byte(line[i:]), &values)
		for _, cw := range doc.AWS.CloudWatchMetrics {
			for _, m := range cw.Metrics {
				if v, ok := values[m.Name].(float64); ok && m.Unit == "Count" {
					sums[m.Name] += v
				}
			}
		}
		return true
	})
}

// answeredAs reports whether function's environments logged, after offsets, that they
// answered event id as a duplicate of a record of outcome stored (the engine's one log line
// per message: outcome "duplicate", stored the record's outcome).
func answeredAs(dir, function string, offsets map[string]int64, id string, stored idempotency.Outcome) bool {
	files, _ := filepath.Glob(filepath.Join(dir, function+"-*.log"))
	for _, name := range files {
		found := false
		_ = eachLine(name, offsets[name], func(line string) bool {
			var l struct{ EventID, Outcome, Stored string }
			i := strings.IndexByte(line, '{')
			found = i >= 0 && strings.Contains(line, id) && json.Unmarshal([]byte(line[i:]), &l) == nil &&
				l.EventID == id && l.Outcome == string(idempotency.Duplicate) && l.Stored == string(stored)
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// eachLine calls fn with each line of file name after offset, until fn returns false.
func eachLine(name string, offset int64, fn func(string) bool) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if !fn(sc.Text()) {
			return nil
		}
	}
	return sc.Err()
}
