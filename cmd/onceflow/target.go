package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/infra/localcloud"
)

// target is where the commands act: AWS, or the local cloud. Queues and tables are named the
// same way on both: a URL or name as AWS knows it, or, with --local, a logical id of the
// template (DeadLetterQueue, IdempotencyTable) as .local/endpoints.json lists them.
type target struct {
	sqs      *sqs.Client
	dynamodb *dynamodb.Client
	lambda   *lambda.Client // AWS only: the relay's configuration
	local    *localcloud.Endpoints
	template string // local only: the template the local cloud runs, for the relay's routes
}

// targetFlags are the flags every command takes.
type targetFlags struct {
	local    bool
	state    string
	template string
	region   string
}

func (f *targetFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.local, "local", false, "act on the local cloud (make up), whose endpoints are in <state>/endpoints.json")
	fs.StringVar(&f.state, "state", ".local", "the local cloud's state directory (with --local)")
	fs.StringVar(&f.template, "template", "template.yaml", "the template the local cloud runs (with --local)")
	fs.StringVar(&f.region, "region", "", "AWS region (default: the credential chain's)")
}

func (f *targetFlags) open(ctx context.Context) (*target, error) {
	if f.local {
		e, err := localcloud.ReadEndpoints(f.state)
		if err != nil {
			return nil, err
		}
		return &target{sqs: e.SQSClient(), dynamodb: e.DynamoDBClient(), local: &e, template: f.template}, nil
	}
	var opts []func(*awsconfig.LoadOptions) error
	if f.region != "" {
		opts = append(opts, awsconfig.WithRegion(f.region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("aws configuration: %w", err)
	}
	return &target{sqs: sqs.NewFromConfig(cfg), dynamodb: dynamodb.NewFromConfig(cfg), lambda: lambda.NewFromConfig(cfg)}, nil
}

// queueURL resolves a queue: a URL as it is, a logical id of the local cloud, or a queue name.
func (t *target) queueURL(ctx context.Context, name string) (string, error) {
	if strings.HasPrefix(name, "https://") || strings.HasPrefix(name, "http://") {
		return name, nil
	}
	if t.local != nil {
		if q, ok := t.local.Queues[name]; ok {
			return q.URL, nil
		}
	}
	out, err := t.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return "", fmt.Errorf("queue %s: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

// table resolves a table: a logical id of the local cloud, else a table name.
func (t *target) table(name string) string {
	if t.local != nil {
		if tb, ok := t.local.Tables[name]; ok {
			return tb.Name
		}
	}
	return name
}
