package localcloud

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// batchSize is how many records v's next batch holds: BatchSize, or fewer while a batch
// whose invocation failed is bisected.
func (p *streamPoller) batchSize(v *vshard) int {
	if v.limit > 0 {
		return min(v.limit, p.event.BatchSize)
	}
	return p.event.BatchSize
}

// bisect halves v's next batch after the invocation of batch failed, when the mapping has
// BisectBatchOnFunctionError: the first half is retried alone, then the batches grow back to
// BatchSize once one succeeds.
func (p *streamPoller) bisect(v *vshard, batch []types.Record) {
	if p.event.Bisect && len(batch) > 1 {
		v.limit = (len(batch) + 1) / 2
	}
}

// expired counts the records at the head of batch older than MaximumRecordAgeInSeconds at
// now (by their ApproximateCreationDateTime), which Lambda discards unprocessed. -1 (and 0,
// an Event built without it) is no limit.
func (p *streamPoller) expired(batch []types.Record, now time.Time) int {
	if p.event.MaxRecordAge <= 0 {
		return 0
	}
	limit := time.Duration(p.event.MaxRecordAge) * time.Second
	for i, r := range batch {
		if r.Dynamodb == nil || r.Dynamodb.ApproximateCreationDateTime == nil || now.Sub(*r.Dynamodb.ApproximateCreationDateTime) <= limit {
			return i
		}
	}
	return len(batch)
}
