package localcloud

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// RunStreamPoller runs a stream event source mapping over the stream arn with n virtual
// shards, invoking inv (as function "fn") with batches of up to batch records and retrying a
// failed batch without limit, until ctx ends. It returns once the poller reads the stream.
func RunStreamPoller(ctx context.Context, streams *dynamodbstreams.Client, arn string, n, batch int, inv Invoker) error {
	return RunStreamPollerBisecting(ctx, streams, arn, n, batch, false, inv)
}

// RunStreamPollerBisecting is RunStreamPoller with BisectBatchOnFunctionError set to bisect.
func RunStreamPollerBisecting(ctx context.Context, streams *dynamodbstreams.Client, arn string, n, batch int, bisect bool, inv Invoker) error {
	p := &streamPoller{function: "fn", streams: streams, invoker: inv, timeout: 10 * time.Second,
		event: Event{Source: "table", SourceARN: arn, BatchSize: batch, StartingPosition: "TRIM_HORIZON", ReportFailures: true,
			MaxRetries: -1, MaxRecordAge: -1, Bisect: bisect},
		onError: func(string, ...any) {}, count: func(func(*MappingStats)) {}}
	if err := p.init(ctx, n); err != nil {
		return err
	}
	go p.run(ctx)
	return nil
}
