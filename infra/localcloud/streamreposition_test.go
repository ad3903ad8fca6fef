package localcloud

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// staleStreams answers GetRecords on a stale iterator with err, and records the iterators asked for.
type staleStreams struct {
	err   error
	asked []*dynamodbstreams.GetShardIteratorInput
}

func (s *staleStreams) DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	return nil, errors.New("not used")
}

func (s *staleStreams) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	s.asked = append(s.asked, in)
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String("fresh")}, nil
}

func (s *staleStreams) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	if aws.ToString(in.ShardIterator) == "stale" {
		return nil, s.err
	}
	return &dynamodbstreams.GetRecordsOutput{NextShardIterator: aws.String("next")}, nil
}

func TestStreamPoller_trimmed_or_expired_iterator_is_taken_again_from_where_reading_stopped(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		shard    shard
		wantType types.ShardIteratorType
		wantSeq  string
	}{
		{"trimmed before any record", &types.TrimmedDataAccessException{}, shard{}, types.ShardIteratorTypeTrimHorizon, ""},
		{"expired after records", &types.ExpiredIteratorException{}, shard{last: "42"}, types.ShardIteratorTypeAfterSequenceNumber, "42"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api := &staleStreams{err: c.err}
			p := &streamPoller{streams: api, streamMapping: &streamMapping{event: Event{BatchSize: 10, SourceARN: "arn:stream"}}}
			s := c.shard
			s.iterator = "stale"
			if _, err := p.poll(context.Background(), "shard-1", &s); err == nil {
				t.Fatal("poll on a stale iterator reported no error")
			}
			if len(api.asked) != 1 || api.asked[0].ShardIteratorType != c.wantType || aws.ToString(api.asked[0].SequenceNumber) != c.wantSeq {
				t.Fatalf("iterators asked: %+v, want one %s %q", api.asked, c.wantType, c.wantSeq)
			}
			if got, err := p.poll(context.Background(), "shard-1", &s); err != nil || got {
				t.Errorf("poll after repositioning = %v, %v; want no records, no error", got, err)
			}
		})
	}
}
