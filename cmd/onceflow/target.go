package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/onceflow/onceflow/pkg/claimcheck"
	"github.com/onceflow/onceflow/pkg/operator/dlq"
)

// target is where the commands act: AWS, or the local cloud, and what the tool knows of the
// stack there. Queues and tables are named the same way on both: by logical id (LedgerDeadLetterQueue,
// IdempotencyTable) when the stack is known (--stack's outputs, or the local cloud's
// endpoints.json), or by URL or name as AWS knows them.
type target struct {
	sqs      *sqs.Client
	dynamodb *dynamodb.Client
	// payloads reads a letter's body that is a claim check (a letter past SQS's limit, in the
	// payload bucket), from any bucket the operator's credentials read.
	payloads *claimcheck.Reader
	stack    *stack // nil: no stack, names are taken as given
	// caller is who calls, recorded with a decision unless --by says who: on AWS the
	// credentials' principal (awsCaller), on the local cloud a local name (localCaller).
	caller func(context.Context) (string, error)
}

// targetFlags are the flags every command takes.
type targetFlags struct {
	local    bool
	state    string
	as       string
	stack    string
	region   string
	endpoint string
	imds     bool
	envCreds bool
}

func (f *targetFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.local, "local", false, "act on the local cloud (make up), whose endpoints are in <state>/endpoints.json")
	fs.StringVar(&f.state, "state", ".local", "the local cloud's state directory (with --local)")
	fs.StringVar(&f.as, "as", "", "with --local, call through the local cloud's gatekeeper as this principal (a function or managed policy of the template, by logical id), authorised as AWS would authorise it")
	fs.StringVar(&f.stack, "stack", "", "the deployed CloudFormation stack whose outputs name the queues, tables, routes and consumers")
	fs.StringVar(&f.region, "region", "", "AWS region (default: the credential chain's)")
	fs.StringVar(&f.endpoint, "endpoint-url", "", "send every AWS call to this URL instead of AWS's (a proxy, an emulator); credentials are still the chain's")
	fs.BoolVar(&f.imds, "imds", false, "on EC2, let the credential chain ask the instance metadata service for the instance role's credentials (off by default)")
	fs.BoolVar(&f.envCreds, "env-credentials", false, "with --local, sign with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) instead of the local cloud's own identity: act as the principal they name")
}

func (f *targetFlags) open(ctx context.Context) (*target, error) {
	if f.local {
		if f.stack != "" || f.endpoint != "" {
			return nil, usageError("--local takes its endpoints from endpoints.json: not with --stack or --endpoint-url")
		}
		e, err := readEndpoints(f.state)
		if err != nil {
			return nil, err
		}
		if f.as != "" && f.envCreds {
			return nil, usageError("--as and --env-credentials both choose who signs: give one")
		}
		creds, err := f.localCredentials(os.Getenv)
		if err != nil {
			return nil, err
		}
		t := &target{stack: e.stack("the local cloud (" + f.state + "/endpoints.json)"), caller: localCaller}
		var s3c *s3.Client
		if t.sqs, t.dynamodb, s3c, err = e.clients(creds, f.as); err != nil {
			return nil, err
		}
		return t.withPayloads(s3c)
	}
	switch {
	case f.as != "":
		return nil, usageError("--as names a principal of the local cloud: give --local too")
	case f.envCreds:
		return nil, usageError("--env-credentials is for --local: elsewhere the credential chain reads the environment first")
	}
	cfg, err := f.config(ctx, os.Getenv)
	if err != nil {
		return nil, err
	}
	at := func(def *string) *string { // --endpoint-url, else the SDK's own (AWS_ENDPOINT_URL_<SERVICE>, ...)
		if f.endpoint != "" {
			return aws.String(f.endpoint)
		}
		return def
	}
	t := &target{
		sqs:      sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = at(o.BaseEndpoint) }),
		dynamodb: dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = at(o.BaseEndpoint) }),
		caller:   awsCaller(sts.NewFromConfig(cfg, func(o *sts.Options) { o.BaseEndpoint = at(o.BaseEndpoint) })),
	}
	if f.stack != "" {
		cfn := cloudformation.NewFromConfig(cfg, func(o *cloudformation.Options) { o.BaseEndpoint = at(o.BaseEndpoint) })
		outputs, err := stackOutputs(ctx, cfn, f.stack)
		if err != nil {
			return nil, err
		}
		t.stack = stackFromOutputs("stack "+f.stack, outputs)
	}
	return t.withPayloads(s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = at(o.BaseEndpoint) }))
}

// withPayloads gives t its reader of claim checks through client.
func (t *target) withPayloads(client *s3.Client) (*target, error) {
	r, err := claimcheck.NewReader(client, claimcheck.ReaderConfig{})
	if err != nil {
		return nil, err
	}
	t.payloads = r
	return t, nil
}

// stackOutputs returns the outputs of a deployed stack by key.
func stackOutputs(ctx context.Context, c *cloudformation.Client, name string) (map[string]string, error) {
	out, err := c.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("stack %s: %w", name, err)
	}
	if len(out.Stacks) == 0 {
		return nil, fmt.Errorf("stack %s: not found", name)
	}
	outputs := map[string]string{}
	for _, o := range out.Stacks[0].Outputs {
		outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return outputs, nil
}

// queueURL resolves a queue: a URL as it is, a logical id of the stack, or a queue name. A
// name that is neither a logical id of the stack nor a queue is refused with the stack's
// queues.
func (t *target) queueURL(ctx context.Context, name string) (string, error) {
	if strings.HasPrefix(name, "https://") || strings.HasPrefix(name, "http://") {
		return name, nil
	}
	if t.stack != nil {
		if url, ok := t.stack.queue(name); ok {
			return url, nil
		}
	}
	out, err := t.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		if t.stack != nil && len(t.stack.queues) > 0 {
			return "", t.stack.unknownQueue(name)
		}
		return "", fmt.Errorf("queue %s: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

// table resolves a table: its logical id or name, or, if name is "", the stack's table of
// logical id def. Without that table a name is required: usage says which.
func (t *target) table(name, def, usage string) (string, error) {
	if name == "" {
		if t.stack == nil {
			return "", usageError(usage)
		}
		if tb, ok := t.stack.tables[def]; ok {
			return tb, nil
		}
		return "", usageError(fmt.Sprintf("%s has no table %s (output %sName): give --table", t.stack.from, def, def))
	}
	return t.stack.table(name)
}

// sourceQueue finds the source queue of the dead-letter queue at dlqURL, for a letter that names
// none (SQS moved it): the one queue SQS lists as its source (ListDeadLetterSourceQueues), else,
// where SQS cannot answer (an emulator), the one queue among the stack's consumer queues (the
// relay's routes, else every queue of the stack) whose redrive policy targets it; "" when none
// is found.
func (t *target) sourceQueue(ctx context.Context, dlqURL string, s ioStreams) string {
	out, err := t.sqs.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(dlqURL)})
	if err == nil && len(out.QueueUrls) == 1 {
		return out.QueueUrls[0]
	}
	if t.stack == nil || len(t.stack.queues) == 0 {
		return ""
	}
	candidates := slices.Sorted(maps.Values(t.stack.queues))
	if rt, err := t.routes(ctx, nil); err == nil && len(rt) > 0 {
		candidates = nil
		for _, urls := range rt {
			for _, u := range urls {
				if !slices.Contains(candidates, u) {
					candidates = append(candidates, u)
				}
			}
		}
		slices.Sort(candidates)
	}
	url, ok, err := dlq.SourceQueue(ctx, t.sqs, dlqURL, candidates)
	if err != nil {
		fmt.Fprintf(s.err, "the dead-letter queue's source queue not found among %s's: %v\n", t.stack.from, err)
	}
	if !ok {
		return ""
	}
	return url
}
