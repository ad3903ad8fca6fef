package localcloud_test

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/onceflow/onceflow/infra/localcloud"
	"github.com/onceflow/onceflow/pkg/testkit"
)

// kinesisEndpoint is the kinesalite of `make test` (infra/emulators.sh exports it).
func kinesisEndpoint(t *testing.T) string {
	t.Helper()
	return testkit.Emulator(t, testkit.KinesisEndpointVariable)
}

func TestKinesalite_listens_on_loopback_and_serves_the_SDK(t *testing.T) {
	ep := kinesisEndpoint(t)
	u, err := url.Parse(ep)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	found := false
	for _, l := range listeners(t) {
		if l.port == port {
			found = true
			if !l.ip.IsLoopback() {
				t.Errorf("kinesalite listens on %s:%d; want loopback only", l.ip, l.port)
			}
		}
	}
	if !found {
		t.Fatalf("kinesalite at %s: no listening socket found", ep)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := kinesis.NewFromConfig(localcloud.AWSConfig(), func(o *kinesis.Options) { o.BaseEndpoint = aws.String(ep) })
	name := fmt.Sprintf("smoke-%d", time.Now().UnixNano())
	if _, err := client.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(2)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteStream(context.Background(), &kinesis.DeleteStreamInput{StreamName: aws.String(name)})
	})
	if err := kinesis.NewStreamExistsWaiter(client, func(o *kinesis.StreamExistsWaiterOptions) { o.MinDelay = 50 * time.Millisecond }).
		Wait(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String(name)}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	put, err := client.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String(name), PartitionKey: aws.String("k1"), Data: []byte(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	it, err := client.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String(name), ShardId: put.ShardId,
		ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Records) != 1 {
		t.Fatalf("GetRecords returned %d records; want 1", len(got.Records))
	}
	r := got.Records[0]
	if string(r.Data) != `{"n":1}` || aws.ToString(r.PartitionKey) != "k1" || aws.ToString(r.SequenceNumber) != aws.ToString(put.SequenceNumber) ||
		r.ApproximateArrivalTimestamp == nil {
		t.Errorf("record = data %q key %q seq %q arrival %v; want the put record (seq %s)", r.Data, aws.ToString(r.PartitionKey),
			aws.ToString(r.SequenceNumber), r.ApproximateArrivalTimestamp, aws.ToString(put.SequenceNumber))
	}
	if got.NextShardIterator == nil {
		t.Error("GetRecords returned no next shard iterator on an open shard")
	}
}
