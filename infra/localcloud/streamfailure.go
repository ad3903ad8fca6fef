package localcloud

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// discard gives up on the records of a batch from sequence number from on, after
// MaximumRetryAttempts, and sends Lambda's failure record to the on-failure destination.
func (p *streamPoller) discard(ctx context.Context, shardID string, recs []types.Record, from string, attempts int) {
	var dropped []types.Record
	for _, r := range recs {
		if len(dropped) > 0 || aws.ToString(r.Dynamodb.SequenceNumber) == from {
			dropped = append(dropped, r)
		}
	}
	if len(dropped) == 0 {
		dropped = recs
	}
	p.count(func(s *MappingStats) { s.Discarded += len(dropped) })
	p.onError("stream records discarded after MaximumRetryAttempts", "function", p.function,
		"shard", shardID, "records", len(dropped), "destination", p.event.OnFailure)
	if p.event.OnFailure == "" || p.send == nil {
		return
	}
	arrival := func(r types.Record) string {
		if t := r.Dynamodb.ApproximateCreationDateTime; t != nil {
			return t.UTC().Format(time.RFC3339Nano)
		}
		return ""
	}
	first, last := dropped[0], dropped[len(dropped)-1]
	body, err := json.Marshal(map[string]any{
		"requestContext": map[string]any{
			"requestId":              fmt.Sprintf("local-%d", time.Now().UnixNano()),
			"functionArn":            fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", Region, Account, p.function),
			"condition":              "RetryAttemptsExhausted",
			"approximateInvokeCount": attempts,
		},
		"responseContext": map[string]any{"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
		"version":         "1.0",
		"timestamp":       time.Now().UTC().Format(time.RFC3339Nano),
		"DDBStreamBatchInfo": map[string]any{
			"shardId":                         shardID,
			"startSequenceNumber":             aws.ToString(first.Dynamodb.SequenceNumber),
			"endSequenceNumber":               aws.ToString(last.Dynamodb.SequenceNumber),
			"approximateArrivalOfFirstRecord": arrival(first),
			"approximateArrivalOfLastRecord":  arrival(last),
			"batchSize":                       len(dropped),
			"streamArn":                       p.event.SourceARN,
		},
	})
	if err == nil {
		err = p.send(context.WithoutCancel(ctx), p.event.OnFailure, string(body))
	}
	if err != nil {
		p.onError("stream on-failure destination", "destination", p.event.OnFailure, "err", err)
	}
}
