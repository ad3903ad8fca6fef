package localcloud

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kintypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// KinesisStream is a Kinesis data stream created locally (on kinesalite) from the template.
type KinesisStream struct {
	Name   string `json:"name"`
	ARN    string `json:"arn"`
	Shards int    `json:"shards"` // open shards at creation
}

// KinesisClient returns a Kinesis client for the local emulator (kinesalite).
func (e Endpoints) KinesisClient() *kinesis.Client {
	return kinesis.NewFromConfig(AWSConfig(), func(o *kinesis.Options) { o.BaseEndpoint = aws.String(e.Kinesis) })
}

// cfnKinesisStream holds the AWS::Kinesis::Stream properties the local cloud applies.
type cfnKinesisStream struct {
	Name                 string
	ShardCount           *int32
	RetentionPeriodHours *int32
	StreamModeDetails    *struct{ StreamMode string }
}

// createKinesisStream creates a stream on kinesalite and waits until it is ACTIVE. Without
// ShardCount a provisioned stream has one shard, an on-demand stream four (as AWS starts it).
func (c *Cloud) createKinesisStream(ctx context.Context, client *kinesis.Client, id string) error {
	props, err := c.refs.resolve(subset(c.tmpl.Properties[id], "Name", "ShardCount", "RetentionPeriodHours", "StreamModeDetails"))
	if err != nil {
		return fmt.Errorf("kinesis stream %s: %w", id, err)
	}
	var p cfnKinesisStream
	if err := remarshal(props, &p); err != nil {
		return fmt.Errorf("kinesis stream %s: properties: %w", id, err)
	}
	name := c.cfg.Prefix + "-" + id
	if p.Name != "" {
		name = c.cfg.Prefix + "-" + p.Name
	}
	shards := int32(1)
	if p.StreamModeDetails != nil && p.StreamModeDetails.StreamMode == "ON_DEMAND" {
		shards = 4
	}
	if p.ShardCount != nil {
		shards = *p.ShardCount
	}
	if _, err := client.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(shards)}); err != nil {
		return fmt.Errorf("create kinesis stream %s: %w", id, err)
	}
	waiter := kinesis.NewStreamExistsWaiter(client, func(o *kinesis.StreamExistsWaiterOptions) { o.MinDelay = 50 * time.Millisecond })
	out, err := waiter.WaitForOutput(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String(name)}, 30*time.Second)
	if err != nil {
		return fmt.Errorf("kinesis stream %s: %w", id, err)
	}
	if h := p.RetentionPeriodHours; h != nil && *h > 24 {
		if _, err := client.IncreaseStreamRetentionPeriod(ctx, &kinesis.IncreaseStreamRetentionPeriodInput{
			StreamName: aws.String(name), RetentionPeriodHours: h}); err != nil {
			return fmt.Errorf("kinesis stream %s: retention: %w", id, err)
		}
	}
	if out.StreamDescription.StreamStatus != kintypes.StreamStatusActive {
		return fmt.Errorf("kinesis stream %s: status %s", id, out.StreamDescription.StreamStatus)
	}
	c.refs.kinesis[id] = KinesisStream{Name: name, ARN: aws.ToString(out.StreamDescription.StreamARN),
		Shards: len(out.StreamDescription.Shards)}
	return nil
}

// kinesisShards returns the number of shards of the template's Kinesis stream id.
func (c *Cloud) kinesisShards(id string) int { return max(c.refs.kinesis[id].Shards, 1) }
