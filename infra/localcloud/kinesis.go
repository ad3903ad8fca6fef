package localcloud

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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

// startKinesalite starts the pinned kinesalite in memory on a loopback port (its command line
// binds every interface: the loopback preload keeps it on 127.0.0.1).
func (c *Cloud) startKinesalite(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("node not found: kinesalite needs Node.js 20 or newer")
	}
	cli := filepath.Join(c.cfg.Root, "infra", "node_modules", "kinesalite", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return "", fmt.Errorf("kinesalite not found: run `cd infra && npm ci`: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("node", "--require", filepath.Join(c.cfg.Root, "infra", "loopback", "loopback.cjs"), cli,
		"--port", fmt.Sprint(port), "--createStreamMs", "50", "--deleteStreamMs", "50", "--updateStreamMs", "50",
		"--shardLimit", "500") // AWS's default shard limit (kinesalite's is 10)
	p, err := c.startTracked("kinesalite", cmd)
	if err != nil {
		return "", err
	}
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	err = waitReady(ctx, p, readyBound, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
		resp, err := http.DefaultClient.Do(req) // any answer: it listens
		if err == nil {
			resp.Body.Close()
		}
		return err
	})
	return endpoint, err
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
