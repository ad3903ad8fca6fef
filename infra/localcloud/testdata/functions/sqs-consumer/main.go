// Command sqs-consumer is a test function: it records each message body in TABLE_NAME as
// "sqs#<body>" and reports a batch item failure for every body containing "fail".
package main

import (
	"context"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/onceflow/onceflow/infra/localcloud/testdata/functions/table"
)

func main() {
	seen := table.FromEnv()
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			if strings.Contains(m.Body, "fail") {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				continue
			}
			err := seen.Put(ctx, map[string]string{
				"pk":       "sqs#" + m.Body,
				"group":    m.Attributes["MessageGroupId"],
				"receives": m.Attributes["ApproximateReceiveCount"],
				"trace":    m.Attributes["AWSTraceHeader"],
				"source":   m.EventSource + " " + m.EventSourceARN,
			})
			if err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return resp, nil
	})
}
