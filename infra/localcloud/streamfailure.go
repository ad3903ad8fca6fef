package localcloud

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// discard gives up on the records of a batch from sequence number from on, after
// MaximumRetryAttempts or MaximumRecordAgeInSeconds (condition: RetryAttemptsExhausted or
// RecordAgeExceeded), and sends Lambda's failure record to the on-failure destination.
func (m *streamMapping) discard(ctx context.Context, shardID string, recs []streamRecord, from string, attempts int, condition string) {
	var dropped []streamRecord
	for _, r := range recs {
		if len(dropped) > 0 || r.seq == from {
			dropped = append(dropped, r)
		}
	}
	if len(dropped) == 0 {
		dropped = recs
	}
	m.count(func(s *MappingStats) { s.Discarded += len(dropped) })
	m.onError("stream records discarded", "condition", condition, "function", m.function,
		"shard", shardID, "records", len(dropped), "destination", m.event.OnFailure)
	if m.event.OnFailure == "" || m.send == nil {
		return
	}
	key, info := m.src.batchInfo(shardID, dropped)
	body, err := json.Marshal(map[string]any{
		"requestContext": map[string]any{
			"requestId":              fmt.Sprintf("local-%d", time.Now().UnixNano()),
			"functionArn":            fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", Region, Account, m.function),
			"condition":              condition,
			"approximateInvokeCount": attempts,
		},
		"responseContext": map[string]any{"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
		"version":         "1.0",
		"timestamp":       time.Now().UTC().Format(time.RFC3339Nano),
		key:               info,
	})
	if err == nil {
		err = m.send(context.WithoutCancel(ctx), m.event.OnFailure, string(body))
	}
	if err != nil {
		m.onError("stream on-failure destination", "destination", m.event.OnFailure, "err", err)
	}
}

// batchInfo is the DDBStreamBatchInfo of a DynamoDB stream's failure record.
func (p *streamPoller) batchInfo(shardID string, dropped []streamRecord) (string, map[string]any) {
	first, last := dropped[0], dropped[len(dropped)-1]
	return "DDBStreamBatchInfo", map[string]any{
		"shardId":                         shardID,
		"startSequenceNumber":             first.seq,
		"endSequenceNumber":               last.seq,
		"approximateArrivalOfFirstRecord": arrivalText(first),
		"approximateArrivalOfLastRecord":  arrivalText(last),
		"batchSize":                       len(dropped),
		"streamArn":                       p.event.SourceARN,
	}
}

func arrivalText(r streamRecord) string {
	if r.arrival.IsZero() {
		return ""
	}
	return r.arrival.UTC().Format(time.RFC3339Nano)
}
