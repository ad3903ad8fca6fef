package localcloud

import (
	"context"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// vshard is a virtual stream shard: the records assigned to it, not yet delivered, in stream
// order, and the state of its failing batch.
type vshard struct {
	id       string
	mu       sync.Mutex
	queue    []streamRecord
	wake     chan struct{}
	failing  string // sequence number a failed batch is retried from
	attempts int    // failed invocations of that batch
	limit    int    // the next batch's size after a bisection, 0 for the mapping's BatchSize
}

func newVShard(id string) *vshard { return &vshard{id: id, wake: make(chan struct{}, 1)} }

// push queues the records of one read at once, so that a batch is never cut from a read
// half queued (Lambda's batch is what a read returned, up to BatchSize).
func (v *vshard) push(recs ...streamRecord) {
	v.mu.Lock()
	v.queue = append(v.queue, recs...)
	v.mu.Unlock()
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// peek returns up to n records from the head, leaving them queued.
func (v *vshard) peek(n int) []streamRecord {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.queue[:min(n, len(v.queue))])
}

// drop removes the first n records: they were delivered or discarded.
func (v *vshard) drop(n int) {
	v.mu.Lock()
	v.queue = v.queue[n:]
	v.mu.Unlock()
}

// assign returns the virtual shard of a record: a hash of its partition key value, so that all
// records of one partition key go to one shard, in stream order.
func (p *streamPoller) assign(r types.Record) int {
	if len(p.virtual) == 1 || r.Dynamodb == nil {
		return 0
	}
	h := fnv.New32a()
	keys := r.Dynamodb.Keys
	names := []string{p.hashKey}
	if _, ok := keys[p.hashKey]; !ok { // unknown key schema: every key attribute, sorted
		names = slices.Sorted(maps.Keys(keys))
	}
	for _, k := range names {
		_, _ = h.Write([]byte(k + "\x00" + keyText(keys[k]) + "\x00"))
	}
	return int(h.Sum32() % uint32(len(p.virtual)))
}

func keyText(v types.AttributeValue) string {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return "S" + x.Value
	case *types.AttributeValueMemberN:
		return "N" + strings.TrimSpace(x.Value)
	case *types.AttributeValueMemberB:
		return "B" + string(x.Value)
	}
	return ""
}

// work delivers a virtual shard's records in order until ctx ends: a batch that partly fails
// is retried from its first failed record, and after MaximumRetryAttempts (or once its record is
// older than MaximumRecordAgeInSeconds) the rest of the batch is discarded to the on-failure
// destination; with -1 for both it is retried until it succeeds, as on Lambda.
func (m *streamMapping) work(ctx context.Context, v *vshard) {
	for ctx.Err() == nil {
		size := m.event.BatchSize
		if v.limit > 0 {
			size = v.limit
		}
		batch := v.peek(size)
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
			case <-v.wake:
			}
			continue
		}
		o, err := m.deliver(ctx, batch)
		if err != nil {
			m.onError("stream deliver", "stream", m.event.Source, "shard", v.id, "err", err)
			sleep(ctx, time.Second)
			continue
		}
		m.settle(ctx, v, batch, o)
	}
}

// settle moves a virtual shard past what a delivery settled. Under BisectBatchOnFunctionError a
// function error halves the batch retried (its first half first, so order is kept), down to one
// record, and a partial batch response bisects the batch at the reported record (only the rest
// of that batch is retried), until a batch succeeds; the batch after that has the mapping's
// size again.
func (m *streamMapping) settle(ctx context.Context, v *vshard, batch []streamRecord, o outcome) {
	retryFrom := o.retryFrom
	if retryFrom == "" {
		v.drop(len(batch))
		v.failing, v.attempts, v.limit = "", 0, 0
		return
	}
	at := slices.IndexFunc(batch, func(r streamRecord) bool { return r.seq == retryFrom })
	at = max(at, 0)
	v.drop(at) // the records before the first failure succeeded
	if retryFrom != v.failing {
		v.failing, v.attempts = retryFrom, 0
	}
	v.attempts++
	condition := ""
	switch {
	case m.event.MaxRetries >= 0 && v.attempts > m.event.MaxRetries:
		condition = "RetryAttemptsExhausted"
	case m.event.MaxRecordAge > 0 && tooOld(batch[at], time.Duration(m.event.MaxRecordAge)*time.Second):
		condition = "RecordAgeExceeded"
	}
	if condition != "" {
		m.discard(ctx, v.id, batch, retryFrom, v.attempts, condition)
		v.drop(len(batch) - at)
		v.failing, v.attempts, v.limit = "", 0, 0
		return
	}
	switch {
	case o.fnErr && m.event.Bisect && len(batch)-at > 1:
		v.limit = (len(batch) - at) / 2
	case o.partial && m.event.Bisect:
		v.limit = len(batch) - at
	}
	sleep(ctx, time.Second)
}

// tooOld reports whether a record was written to the stream more than age ago.
func tooOld(r streamRecord, age time.Duration) bool {
	return !r.arrival.IsZero() && time.Since(r.arrival) > age
}

// idle reports whether every record queued was delivered or discarded.
func (v *vshard) idle() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.queue) == 0
}
