package localcloud

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kintypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// kinesisAPI is what the Kinesis poller needs of the Kinesis client.
type kinesisAPI interface {
	ListShards(context.Context, *kinesis.ListShardsInput, ...func(*kinesis.Options)) (*kinesis.ListShardsOutput, error)
	GetShardIterator(context.Context, *kinesis.GetShardIteratorInput, ...func(*kinesis.Options)) (*kinesis.GetShardIteratorOutput, error)
	GetRecords(context.Context, *kinesis.GetRecordsInput, ...func(*kinesis.Options)) (*kinesis.GetRecordsOutput, error)
}

// kinesisPoller emulates a Kinesis event source mapping (ParallelizationFactor 1): each shard
// of the stream is a Lambda shard, read after its parent shards are read and delivered, its
// records delivered in order in batches of its own, concurrently with the other shards, on the
// batch core the DynamoDB stream poller uses (partial batch responses, bisection, retries,
// record age, on-failure destination).
type kinesisPoller struct {
	*streamMapping
	kinesis kinesisAPI
	name    string // the stream's name (kinesalite knows streams by name, not by ARN)
	mu      sync.Mutex
	shards  map[string]*kshard
	started func(v *vshard) // runs a new shard's worker
}

type kshard struct {
	parents  []string
	iterator string
	done     bool   // read to its end (a closed shard)
	last     string // sequence number of the last record read past
	v        *vshard
}

// kinesisRecord is a Kinesis record with the shard it was read from.
type kinesisRecord struct {
	kintypes.Record
	shard string
}

// init takes iterators for the shards that exist now, at the mapping's starting position.
func (p *kinesisPoller) init(ctx context.Context) error {
	p.src = p
	p.shards = map[string]*kshard{}
	return p.discover(ctx, kintypes.ShardIteratorType(p.event.StartingPosition))
}

// discover adds shards not seen yet; shards born later (a reshard) start at TRIM_HORIZON.
func (p *kinesisPoller) discover(ctx context.Context, position kintypes.ShardIteratorType) error {
	in := &kinesis.ListShardsInput{StreamName: aws.String(p.name)}
	for {
		out, err := p.kinesis.ListShards(ctx, in)
		if err != nil {
			return fmt.Errorf("list shards %s: %w", p.event.SourceARN, err)
		}
		for _, s := range out.Shards {
			id := aws.ToString(s.ShardId)
			p.mu.Lock()
			_, known := p.shards[id]
			p.mu.Unlock()
			if known {
				continue
			}
			it, err := p.kinesis.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{
				StreamName: aws.String(p.name), ShardId: s.ShardId, ShardIteratorType: position})
			if err != nil {
				return fmt.Errorf("shard iterator %s: %w", id, err)
			}
			ks := &kshard{iterator: aws.ToString(it.ShardIterator), v: newVShard(id)}
			for _, parent := range []*string{s.ParentShardId, s.AdjacentParentShardId} {
				if parent != nil {
					ks.parents = append(ks.parents, *parent)
				}
			}
			p.mu.Lock()
			p.shards[id] = ks
			p.mu.Unlock()
			if p.started != nil {
				p.started(ks.v)
			}
		}
		if out.NextToken == nil {
			return nil
		}
		in = &kinesis.ListShardsInput{NextToken: out.NextToken}
	}
}

// run reads the stream and runs a worker per shard until ctx ends.
func (p *kinesisPoller) run(ctx context.Context) {
	var wg sync.WaitGroup
	p.mu.Lock()
	p.started = func(v *vshard) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.work(ctx, v)
		}()
	}
	for _, s := range p.shards {
		p.started(s.v)
	}
	p.mu.Unlock()
	p.read(ctx)
	wg.Wait()
}

func (p *kinesisPoller) read(ctx context.Context) {
	for ctx.Err() == nil {
		busy, closed := false, false
		p.mu.Lock()
		ids := make([]string, 0, len(p.shards))
		for id := range p.shards {
			ids = append(ids, id)
		}
		p.mu.Unlock()
		for _, id := range ids {
			p.mu.Lock()
			s := p.shards[id]
			ready := !s.done && p.parentsDone(s)
			p.mu.Unlock()
			if !ready {
				continue
			}
			got, err := p.poll(ctx, id, s)
			if err != nil && ctx.Err() == nil {
				p.onError("kinesis poll", "stream", p.event.Source, "shard", id, "err", err)
				sleep(ctx, time.Second)
			}
			busy = busy || got
			closed = closed || s.done
		}
		if closed || !busy {
			if err := p.discover(ctx, kintypes.ShardIteratorTypeTrimHorizon); err != nil && ctx.Err() == nil {
				p.onError("kinesis discover", "stream", p.event.Source, "err", err)
			}
		}
		if !busy {
			sleep(ctx, 250*time.Millisecond) // Lambda polls each shard about once a second; quicker here
		}
	}
}

// parentsDone reports whether every parent of a shard was read to its end and delivered, so
// that a key's records after a reshard never overtake its records before it. p.mu is held.
func (p *kinesisPoller) parentsDone(s *kshard) bool {
	for _, id := range s.parents {
		if parent, ok := p.shards[id]; ok && (!parent.done || !parent.v.idle()) {
			return false
		}
	}
	return true
}

// poll reads one batch of a shard and queues its records; it reports whether there were any.
func (p *kinesisPoller) poll(ctx context.Context, id string, s *kshard) (bool, error) {
	out, err := p.kinesis.GetRecords(ctx, &kinesis.GetRecordsInput{
		ShardIterator: aws.String(s.iterator), Limit: aws.Int32(int32(min(p.event.BatchSize, 10000)))})
	if err != nil {
		var expired *kintypes.ExpiredIteratorException
		if !errors.As(err, &expired) {
			return false, err
		}
		in := &kinesis.GetShardIteratorInput{StreamName: aws.String(p.name), ShardId: aws.String(id),
			ShardIteratorType: kintypes.ShardIteratorTypeTrimHorizon}
		if s.last != "" {
			in.ShardIteratorType, in.StartingSequenceNumber = kintypes.ShardIteratorTypeAfterSequenceNumber, aws.String(s.last)
		}
		it, ierr := p.kinesis.GetShardIterator(ctx, in)
		if ierr != nil {
			return false, errors.Join(err, fmt.Errorf("new iterator: %w", ierr))
		}
		s.iterator = aws.ToString(it.ShardIterator)
		return false, fmt.Errorf("iterator repositioned %s: %w", in.ShardIteratorType, err)
	}
	recs := make([]streamRecord, 0, len(out.Records))
	for _, r := range out.Records {
		sr := streamRecord{seq: aws.ToString(r.SequenceNumber), record: kinesisRecord{Record: r, shard: id}}
		if r.ApproximateArrivalTimestamp != nil {
			sr.arrival = *r.ApproximateArrivalTimestamp
		}
		recs = append(recs, sr)
	}
	if len(recs) > 0 {
		s.v.push(recs...)
		s.last = recs[len(recs)-1].seq
	}
	s.iterator = aws.ToString(out.NextShardIterator)
	p.mu.Lock()
	s.done = out.NextShardIterator == nil
	p.mu.Unlock()
	return len(recs) > 0, nil
}
