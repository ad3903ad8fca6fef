package localcloud

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// streamRecord is a record of a stream shard (DynamoDB Streams or Kinesis) as the batch core
// sees it: its sequence number, when it reached the stream, and the record itself.
type streamRecord struct {
	seq     string
	arrival time.Time // zero when unknown
	record  any       // a dynamodbstreams or a kinesis types.Record
}

// streamSource is what a stream mapping's batch core asks of its kind of stream.
type streamSource interface {
	// encode builds the function's event from the records FilterCriteria passes and returns
	// their sequence numbers in order (none: nothing to invoke).
	encode(recs []streamRecord) (payload []byte, seqs []string, err error)
	// batchInfo is the failure record's batch information (its key, e.g. DDBStreamBatchInfo)
	// for records given up on shard shardID.
	batchInfo(shardID string, dropped []streamRecord) (key string, info map[string]any)
}

// streamMapping is the batch core of a stream event source mapping, shared by the DynamoDB
// Streams and the Kinesis pollers: ordered batches per shard, partial batch responses,
// bisection, retries, record age and the on-failure destination.
type streamMapping struct {
	function string
	event    Event
	invoker  Invoker
	timeout  time.Duration
	onError  func(msg string, args ...any)
	count    func(func(*MappingStats))
	send     func(ctx context.Context, queueARN, body string) error // to the on-failure destination
	src      streamSource
}

// outcome is what a delivery settled: retryFrom is "" when the batch succeeded, else the
// sequence number to read again from; fnErr marks a function error (what
// BisectBatchOnFunctionError splits a batch on), partial a partial batch response.
type outcome struct {
	retryFrom string
	fnErr     bool
	partial   bool
}

// deliver invokes the function with a batch and returns what it settled.
func (m *streamMapping) deliver(ctx context.Context, recs []streamRecord) (outcome, error) {
	payload, seqs, err := m.src.encode(recs)
	if err != nil || len(seqs) == 0 {
		return outcome{}, err
	}
	return m.invoke(ctx, payload, seqs), nil
}

// invoke invokes the function with a batch of records of sequence numbers seqs, in order, and
// reads its partial batch response as Lambda does: an empty or null list (or response) is a
// success; otherwise the lowest reported sequence number is the checkpoint, and an empty
// identifier or one that is no record of the batch fails the whole batch.
func (m *streamMapping) invoke(ctx context.Context, payload []byte, seqs []string) outcome {
	ictx, cancel := context.WithTimeout(ctx, m.timeout)
	out, err := m.invoker.Invoke(ictx, m.function, payload)
	cancel()
	m.count(func(s *MappingStats) {
		s.Batches++
		s.Records += len(seqs)
		s.LargestBatch = max(s.LargestBatch, len(seqs))
		if err != nil {
			s.FailedBatches++
		}
	})
	whole := outcome{retryFrom: seqs[0]}
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			m.onError("stream invoke failed: batch retried", "function", m.function, "records", len(seqs), "err", err)
		}
		whole.fnErr = true
		return whole
	}
	passed := func(n int) { m.count(func(s *MappingStats) { s.Succeeded += n }) }
	if !m.event.ReportFailures || len(out) == 0 || string(out) == "null" {
		passed(len(seqs))
		return outcome{}
	}
	var resp events.DynamoDBEventResponse // the same shape as Kinesis's
	if err := json.Unmarshal(out, &resp); err != nil {
		m.onError("stream response is not a partial batch response: batch retried", "function", m.function, "err", err)
		whole.fnErr = true
		return whole
	}
	if len(resp.BatchItemFailures) == 0 {
		passed(len(seqs))
		return outcome{}
	}
	m.count(func(s *MappingStats) { s.ItemFailures += len(resp.BatchItemFailures) })
	at := len(seqs)
	for _, f := range resp.BatchItemFailures {
		i := slices.Index(seqs, f.ItemIdentifier)
		if f.ItemIdentifier == "" || i < 0 {
			m.onError("stream response reports an identifier not in the batch: batch retried", "function", m.function,
				"itemIdentifier", f.ItemIdentifier)
			return whole
		}
		at = min(at, i)
	}
	passed(at)
	return outcome{retryFrom: seqs[at], partial: true}
}
