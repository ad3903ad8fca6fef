// Command kinesis-consumer is a test function of a Kinesis stream whose records are JSON
// {"id":"k…","text":"…"}: for each it counts a delivery of "kseen#<id>" in TABLE_NAME, with the
// record's sequence number, event id and source. A record whose text is "gate" fails (batch
// item failure) until an item "gate#<id>" exists; one whose text is "poison" always fails. A
// record whose id does not start with "k" is an error: the mapping's filter drops them.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/onceflow/onceflow/infra/localcloud/testdata/functions/table"
)

func main() {
	seen := table.FromEnv()
	lambda.Start(func(ctx context.Context, ev events.KinesisEvent) (events.KinesisEventResponse, error) {
		var resp events.KinesisEventResponse
		fail := func(r events.KinesisEventRecord) (events.KinesisEventResponse, error) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.KinesisBatchItemFailure{ItemIdentifier: r.Kinesis.SequenceNumber})
			return resp, nil // Lambda retries from the first failed record
		}
		for _, r := range ev.Records {
			var data struct{ ID, Text string }
			if err := json.Unmarshal(r.Kinesis.Data, &data); err != nil || !strings.HasPrefix(data.ID, "k") {
				return resp, fmt.Errorf("record %s (%q) passed the mapping's filter", r.EventID, r.Kinesis.Data)
			}
			switch data.Text {
			case "poison":
				return fail(r)
			case "gate":
				if open, err := seen.Has(ctx, "gate#"+data.ID); err != nil || !open {
					return fail(r)
				}
			}
			err := seen.Count(ctx, "kseen#"+data.ID, map[string]string{
				"seq":     r.Kinesis.SequenceNumber,
				"eventId": r.EventID,
				"key":     r.Kinesis.PartitionKey,
				"source":  r.EventSource + " " + r.EventSourceArn,
			})
			if err != nil {
				return fail(r)
			}
		}
		return resp, nil
	})
}
