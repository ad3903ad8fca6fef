package localcloud

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/onceflow/onceflow/pkg/dynamodbbatch"
)

// streamsAPI is what the stream poller needs of the DynamoDB Streams client.
type streamsAPI interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// streamPoller emulates a DynamoDB stream event source mapping. A reader takes every open
// shard of the stream after its parent, in order, and assigns each record by its partition
// key to one of a fixed number of virtual shards, as AWS assigns items to partitions and so
// to stream shards (DynamoDB Local has one shard per stream). Each virtual shard is a Lambda
// shard: its records are delivered in order, in batches of its own, concurrently with the
// other virtual shards, and a failed batch is retried from its first failed record until it
// succeeds, or MaximumRetryAttempts is exhausted or its record is older than
// MaximumRecordAgeInSeconds (neither, when they are -1: retried until it succeeds), holding back
// only that virtual shard; a function error halves the next batch under
// BisectBatchOnFunctionError.
type streamPoller struct {
	*streamMapping
	streams streamsAPI
	shards  map[string]*shard
	virtual []*vshard
	hashKey string // the table's partition key attribute
}

type shard struct {
	parent   string
	iterator string
	done     bool
	last     string // sequence number of the last record read past, "" before the first
}

// init takes iterators for the shards that exist now, at the mapping's starting position, so
// records written after Start returns are never missed with LATEST; n virtual shards (at
// least one) receive the records.
func (p *streamPoller) init(ctx context.Context, n int) error {
	p.src = p
	p.shards = map[string]*shard{}
	p.virtual = make([]*vshard, max(n, 1))
	for i := range p.virtual {
		p.virtual[i] = newVShard(fmt.Sprintf("shardId-local-%03d-of-%03d", i, len(p.virtual)))
	}
	return p.discover(ctx, types.ShardIteratorType(p.event.StartingPosition))
}

// discover adds shards not seen yet; shards born later start at TRIM_HORIZON.
func (p *streamPoller) discover(ctx context.Context, position types.ShardIteratorType) error {
	var start *string
	for {
		out, err := p.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{
			StreamArn: aws.String(p.event.SourceARN), ExclusiveStartShardId: start})
		if err != nil {
			return fmt.Errorf("describe stream %s: %w", p.event.SourceARN, err)
		}
		for _, k := range out.StreamDescription.KeySchema {
			if k.KeyType == types.KeyTypeHash {
				p.hashKey = aws.ToString(k.AttributeName)
			}
		}
		for _, s := range out.StreamDescription.Shards {
			id := aws.ToString(s.ShardId)
			if _, ok := p.shards[id]; ok {
				continue
			}
			it, err := p.streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
				StreamArn: aws.String(p.event.SourceARN), ShardId: s.ShardId, ShardIteratorType: position})
			if err != nil {
				return fmt.Errorf("shard iterator %s: %w", id, err)
			}
			p.shards[id] = &shard{parent: aws.ToString(s.ParentShardId), iterator: aws.ToString(it.ShardIterator)}
		}
		start = out.StreamDescription.LastEvaluatedShardId
		if start == nil {
			return nil
		}
	}
}

// run reads the stream and runs every virtual shard until ctx ends.
func (p *streamPoller) run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, v := range p.virtual {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.work(ctx, v)
		}()
	}
	p.read(ctx)
	wg.Wait()
}

func (p *streamPoller) read(ctx context.Context) {
	for ctx.Err() == nil {
		busy, closed := false, false
		for id, s := range p.shards {
			if s.done || !p.parentDone(s) {
				continue
			}
			got, err := p.poll(ctx, id, s)
			if err != nil && ctx.Err() == nil {
				p.onError("stream poll", "stream", p.event.Source, "shard", id, "err", err)
				sleep(ctx, time.Second)
			}
			busy = busy || got
			closed = closed || s.done
		}
		if closed || !busy {
			if err := p.discover(ctx, types.ShardIteratorTypeTrimHorizon); err != nil && ctx.Err() == nil {
				p.onError("stream discover", "stream", p.event.Source, "err", err)
			}
		}
		if !busy {
			sleep(ctx, 250*time.Millisecond) // Lambda polls each shard about four times a second
		}
	}
}

func (p *streamPoller) parentDone(s *shard) bool {
	parent, ok := p.shards[s.parent]
	return !ok || parent.done
}

// poll reads one batch of a stream shard and hands its records to their virtual shards; it
// reports whether there were records.
func (p *streamPoller) poll(ctx context.Context, id string, s *shard) (bool, error) {
	out, err := p.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{
		ShardIterator: aws.String(s.iterator), Limit: aws.Int32(int32(min(p.event.BatchSize, 1000)))})
	if err != nil {
		return false, p.reposition(ctx, id, s, err)
	}
	byShard := make([][]streamRecord, len(p.virtual))
	for _, r := range out.Records {
		i := p.assign(r)
		byShard[i] = append(byShard[i], dynamoRecord(r))
	}
	for i, recs := range byShard {
		if len(recs) > 0 {
			p.virtual[i].push(recs...)
		}
	}
	s.iterator = aws.ToString(out.NextShardIterator)
	s.done = out.NextShardIterator == nil
	if n := len(out.Records); n > 0 && out.Records[n-1].Dynamodb != nil {
		s.last = aws.ToString(out.Records[n-1].Dynamodb.SequenceNumber)
	}
	return len(out.Records) > 0, nil
}

// reposition takes a new iterator for a shard whose iterator expired or points at trimmed
// records (DynamoDB Local's TRIM_HORIZON iterator of an empty shard can go stale while other
// tables' streams advance): right after the last record read past, or at the trim horizon
// before the first, as Lambda's pollers resume from sequence numbers. It returns err.
func (p *streamPoller) reposition(ctx context.Context, id string, s *shard, err error) error {
	var trimmed *types.TrimmedDataAccessException
	var expired *types.ExpiredIteratorException
	if !errors.As(err, &trimmed) && !errors.As(err, &expired) {
		return err
	}
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(p.event.SourceARN), ShardId: aws.String(id),
		ShardIteratorType: types.ShardIteratorTypeTrimHorizon}
	if s.last != "" {
		in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(s.last)
	}
	it, ierr := p.streams.GetShardIterator(ctx, in)
	if ierr != nil {
		return errors.Join(err, fmt.Errorf("new iterator: %w", ierr))
	}
	s.iterator = aws.ToString(it.ShardIterator)
	return fmt.Errorf("iterator repositioned %s: %w", in.ShardIteratorType, err)
}

// encode builds the DynamoDB event of the records FilterCriteria passes.
func (p *streamPoller) encode(recs []streamRecord) ([]byte, []string, error) {
	raw := make([]types.Record, len(recs))
	for i, r := range recs {
		raw[i] = r.record.(types.Record)
	}
	all, err := dynamodbbatch.EventOf(raw, p.event.SourceARN)
	if err != nil {
		return nil, nil, err
	}
	var ev events.DynamoDBEvent
	for _, r := range all.Records {
		if p.event.Filter.match(r) {
			ev.Records = append(ev.Records, r)
		}
	}
	if n := len(all.Records) - len(ev.Records); n > 0 {
		p.count(func(s *MappingStats) { s.Filtered += n })
	}
	if len(ev.Records) == 0 {
		return nil, nil, nil
	}
	seqs := make([]string, len(ev.Records))
	for i, r := range ev.Records {
		seqs[i] = r.Change.SequenceNumber
	}
	payload, err := json.Marshal(ev)
	return payload, seqs, err
}

// dynamoRecord is a stream record for the batch core.
func dynamoRecord(r types.Record) streamRecord {
	out := streamRecord{record: r}
	if d := r.Dynamodb; d != nil {
		out.seq = aws.ToString(d.SequenceNumber)
		if d.ApproximateCreationDateTime != nil {
			out.arrival = *d.ApproximateCreationDateTime
		}
	}
	return out
}
