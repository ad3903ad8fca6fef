package localcloud

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
)

// RunStreamPoller runs a stream event source mapping over the stream arn with n virtual
// shards, invoking inv (as function "fn") with batches of up to batch records and retrying a
// failed batch without limit, until ctx ends. It returns once the poller reads the stream.
func RunStreamPoller(ctx context.Context, streams *dynamodbstreams.Client, arn string, n, batch int, inv Invoker) error {
	return RunStreamPollerWith(ctx, streams, arn, n, batch, StreamOptions{MaxRecordAge: -1}, inv)
}

// StreamOptions are a stream mapping's BisectBatchOnFunctionError and MaximumRecordAgeInSeconds.
type StreamOptions struct {
	Bisect       bool
	MaxRecordAge int
}

// RunStreamPollerWith is RunStreamPoller with the mapping's options o.
func RunStreamPollerWith(ctx context.Context, streams *dynamodbstreams.Client, arn string, n, batch int, o StreamOptions, inv Invoker) error {
	p := &streamPoller{streams: streams, streamMapping: &streamMapping{function: "fn", invoker: inv, timeout: 10 * time.Second,
		event: Event{Source: "table", SourceARN: arn, BatchSize: batch, StartingPosition: "TRIM_HORIZON", ReportFailures: true,
			MaxRetries: -1, MaxRecordAge: o.MaxRecordAge, Bisect: o.Bisect},
		onError: func(string, ...any) {}, count: func(func(*MappingStats)) {}}}
	if err := p.init(ctx, n); err != nil {
		return err
	}
	go p.run(ctx)
	return nil
}

// RunKinesisPoller runs a Kinesis event source mapping over the stream name (of ARN arn) from
// TRIM_HORIZON, invoking inv (as function "fn") with batches of up to batch records and
// retrying a failed batch without limit, until ctx ends. It returns once the poller reads the
// stream.
func RunKinesisPoller(ctx context.Context, client *kinesis.Client, name, arn string, batch int, o StreamOptions, inv Invoker) error {
	p := &kinesisPoller{kinesis: client, name: name, streamMapping: &streamMapping{function: "fn", invoker: inv, timeout: 10 * time.Second,
		event: Event{Source: "stream", SourceARN: arn, BatchSize: batch, StartingPosition: "TRIM_HORIZON", ReportFailures: true,
			MaxRetries: -1, MaxRecordAge: o.MaxRecordAge, Bisect: o.Bisect},
		onError: func(string, ...any) {}, count: func(func(*MappingStats)) {}}}
	if err := p.init(ctx); err != nil {
		return err
	}
	go p.run(ctx)
	return nil
}
