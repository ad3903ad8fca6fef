package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// scanCmd prints a table's items as JSON lines, or, without a table, every table and its item
// count.
func scanCmd(args []string) error {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	state := fs.String("state", ".local", "state directory")
	limit := fs.Int("limit", 50, "items to print at most")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ep, err := localcloud.ReadEndpoints(*state)
	if err != nil {
		return err
	}
	db, ctx := ep.DynamoDBClient(), context.Background()
	if fs.NArg() == 0 {
		for _, id := range sortedIDs(ep.Tables) {
			out, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(ep.Tables[id].Name), Select: ddbtypes.SelectCount})
			if err != nil {
				return fmt.Errorf("scan %s: %w", id, err)
			}
			fmt.Printf("%-20s %6d items  %s\n", id, out.Count, ep.Tables[id].Name)
		}
		return nil
	}
	t, ok := ep.Tables[fs.Arg(0)]
	if !ok {
		return fmt.Errorf("no table %q; tables: %v", fs.Arg(0), sortedIDs(ep.Tables))
	}
	p := dynamodb.NewScanPaginator(db, &dynamodb.ScanInput{TableName: aws.String(t.Name)})
	n := 0
	for p.HasMorePages() && n < *limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("scan %s: %w", fs.Arg(0), err)
		}
		var items []map[string]any
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return err
		}
		for _, it := range items[:min(len(items), *limit-n)] {
			b, _ := json.Marshal(it)
			fmt.Println(string(b))
			n++
		}
	}
	return nil
}

// queueCmd prints a queue's counts and its messages, without receiving them (fauxqs's
// inspection endpoint: no receive count grows, no visibility changes), or, without a queue,
// every queue and its counts.
func queueCmd(args []string) error {
	fs := flag.NewFlagSet("queue", flag.ContinueOnError)
	state := fs.String("state", ".local", "state directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ep, err := localcloud.ReadEndpoints(*state)
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		var qs []struct {
			Name                                                                       string
			ApproximateMessageCount, ApproximateInflightCount, ApproximateDelayedCount int
		}
		if err := getJSON(ep.SQS+"/_fauxqs/queues", &qs); err != nil {
			return err
		}
		byName := map[string]string{}
		for id, q := range ep.Queues {
			byName[q.Name] = id
		}
		sort.Slice(qs, func(i, j int) bool { return byName[qs[i].Name] < byName[qs[j].Name] })
		for _, q := range qs {
			if id, ok := byName[q.Name]; ok {
				fmt.Printf("%-30s %4d visible %4d in flight %4d delayed\n", id, q.ApproximateMessageCount, q.ApproximateInflightCount, q.ApproximateDelayedCount)
			}
		}
		return nil
	}
	q, ok := ep.Queues[fs.Arg(0)]
	if !ok {
		return fmt.Errorf("no queue %q; queues: %v", fs.Arg(0), sortedIDs(ep.Queues))
	}
	var in struct {
		Attributes map[string]string
		Messages   struct {
			Ready, Delayed []json.RawMessage
			Inflight       []struct{ Message json.RawMessage }
		}
	}
	if err := getJSON(ep.SQS+"/_fauxqs/queues/"+url.PathEscape(q.Name), &in); err != nil {
		return err
	}
	fmt.Printf("%s  %s\n", fs.Arg(0), q.URL)
	for _, k := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed", "RedrivePolicy"} {
		if v, ok := in.Attributes[k]; ok {
			fmt.Printf("  %s: %s\n", k, v)
		}
	}
	show := func(state string, m json.RawMessage) {
		var msg struct {
			MessageID               string `json:"messageId"`
			Body, MessageGroupID    string
			ApproximateReceiveCount int
			MessageAttributes       map[string]struct{ StringValue string }
		}
		_ = json.Unmarshal(m, &msg)
		fmt.Printf("%-9s %s group=%s receives=%d\n", state, msg.MessageID, msg.MessageGroupID, msg.ApproximateReceiveCount)
		for _, k := range sortedIDs(msg.MessageAttributes) {
			fmt.Printf("          %s: %s\n", k, msg.MessageAttributes[k].StringValue)
		}
		fmt.Printf("          body: %s\n", msg.Body)
	}
	for _, m := range in.Messages.Ready {
		show("visible", m)
	}
	for _, m := range in.Messages.Inflight {
		show("in flight", m.Message)
	}
	for _, m := range in.Messages.Delayed {
		show("delayed", m)
	}
	return nil
}

func getJSON(u string, v any) error {
	resp, err := http.Get(u) //nolint:gosec // the local emulator's loopback endpoint
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return json.Unmarshal(b, v)
}

func sortedIDs[V any](m map[string]V) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
