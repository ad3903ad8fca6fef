// Command stream-consumer is a test function: for each INSERT of an item whose pk starts with
// "note#" it writes "seen#<pk>" with the inserted item's text into TABLE_NAME. A note whose
// text is "gate" fails (batch item failure) until an item "gate#<pk>" exists; one whose text
// is "poison" always fails. Any other record is an error: the mapping's filter drops them.
package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/onceflow/onceflow/infra/localcloud/testdata/functions/table"
)

func main() {
	seen := table.FromEnv()
	lambda.Start(func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		var resp events.DynamoDBEventResponse
		for _, r := range ev.Records {
			pk := r.Change.Keys["pk"].String()
			if r.EventName != "INSERT" || !strings.HasPrefix(pk, "note#") {
				return resp, fmt.Errorf("record %s %s passed the mapping's filter", r.EventName, pk)
			}
			if r.Change.NewImage["text"].String() == "poison" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
				return resp, nil
			}
			if r.Change.NewImage["text"].String() == "gate" {
				if open, err := seen.Has(ctx, "gate#"+pk); err != nil || !open {
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
					return resp, nil
				}
			}
			err := seen.Put(ctx, map[string]string{
				"pk":     "seen#" + pk,
				"text":   r.Change.NewImage["text"].String(),
				"seq":    r.Change.SequenceNumber,
				"source": r.EventSource + " " + r.EventSourceArn,
			})
			if err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
				return resp, nil // retry from the first failed record
			}
		}
		return resp, nil
	})
}
