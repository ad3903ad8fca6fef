package localcloud

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Table is a DynamoDB table created locally from the template.
type Table struct {
	Name      string `json:"name"`
	ARN       string `json:"arn"`
	StreamARN string `json:"streamArn,omitempty"`
}

// Queue is an SQS queue created locally from the template.
type Queue struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	ARN  string `json:"arn"`
}

// cfnTable holds the AWS::DynamoDB::Table properties the local cloud applies. Their names are
// those of CloudFormation, which match the DynamoDB API's.
type cfnTable struct {
	KeySchema               []ddbtypes.KeySchemaElement
	AttributeDefinitions    []ddbtypes.AttributeDefinition
	BillingMode             ddbtypes.BillingMode
	ProvisionedThroughput   *ddbtypes.ProvisionedThroughput
	GlobalSecondaryIndexes  []ddbtypes.GlobalSecondaryIndex
	LocalSecondaryIndexes   []ddbtypes.LocalSecondaryIndex
	StreamSpecification     *struct{ StreamViewType ddbtypes.StreamViewType }
	TimeToLiveSpecification *struct {
		AttributeName string
		Enabled       any
	}
}

func (c *Cloud) createTable(ctx context.Context, id string) error {
	props, err := c.refs.resolve(subset(c.tmpl.Properties[id], "KeySchema", "AttributeDefinitions", "BillingMode",
		"ProvisionedThroughput", "GlobalSecondaryIndexes", "LocalSecondaryIndexes", "StreamSpecification",
		"TimeToLiveSpecification"))
	if err != nil {
		return fmt.Errorf("table %s: %w", id, err)
	}
	var p cfnTable
	if err := remarshal(props, &p); err != nil {
		return fmt.Errorf("table %s: properties: %w", id, err)
	}
	in := &dynamodb.CreateTableInput{
		TableName:              aws.String(c.cfg.Prefix + "-" + id),
		KeySchema:              p.KeySchema,
		AttributeDefinitions:   p.AttributeDefinitions,
		BillingMode:            p.BillingMode,
		ProvisionedThroughput:  p.ProvisionedThroughput,
		GlobalSecondaryIndexes: p.GlobalSecondaryIndexes,
		LocalSecondaryIndexes:  p.LocalSecondaryIndexes,
	}
	if in.BillingMode == "" && in.ProvisionedThroughput == nil {
		in.BillingMode = ddbtypes.BillingModePayPerRequest
	}
	if s := p.StreamSpecification; s != nil {
		in.StreamSpecification = &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: s.StreamViewType}
	}
	out, err := c.ddb.CreateTable(ctx, in)
	if err != nil {
		return fmt.Errorf("create table %s: %w", id, err)
	}
	t := Table{Name: *in.TableName, ARN: aws.ToString(out.TableDescription.TableArn),
		StreamARN: aws.ToString(out.TableDescription.LatestStreamArn)}
	if ttl := p.TimeToLiveSpecification; ttl != nil && fmt.Sprint(ttl.Enabled) == "true" {
		_, err := c.ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
			TableName: in.TableName,
			TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{
				AttributeName: aws.String(ttl.AttributeName), Enabled: aws.Bool(true)},
		})
		if err != nil {
			return fmt.Errorf("table %s: time to live: %w", id, err)
		}
	}
	c.refs.tables[id] = t
	return nil
}

// queueAttributes are the AWS::SQS::Queue properties passed to CreateQueue as attributes.
var queueAttributes = []string{
	"ContentBasedDeduplication", "DeduplicationScope", "DelaySeconds", "FifoQueue",
	"FifoThroughputLimit", "MaximumMessageSize", "MessageRetentionPeriod",
	"ReceiveMessageWaitTimeSeconds", "VisibilityTimeout",
}

func (c *Cloud) createQueue(ctx context.Context, id string) error {
	props, err := c.refs.resolve(subset(c.tmpl.Properties[id], append(queueAttributes, "RedrivePolicy")...))
	if err != nil {
		return fmt.Errorf("queue %s: %w", id, err)
	}
	p, _ := props.(map[string]any)
	attrs := map[string]string{}
	for _, name := range queueAttributes {
		if v, ok := p[name]; ok {
			s, err := stringify(v)
			if err != nil {
				return fmt.Errorf("queue %s: %s: %w", id, name, err)
			}
			attrs[name] = s
		}
	}
	if rp, ok := p["RedrivePolicy"]; ok {
		b, err := json.Marshal(rp)
		if err != nil {
			return fmt.Errorf("queue %s: RedrivePolicy: %w", id, err)
		}
		attrs["RedrivePolicy"] = string(b)
	}
	if c.cfg.VisibilityTimeout > 0 {
		attrs["VisibilityTimeout"] = strconv.Itoa(c.cfg.VisibilityTimeout)
	}
	name := c.cfg.Prefix + "-" + id
	if attrs["FifoQueue"] == "true" {
		name += ".fifo"
	}
	out, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return fmt.Errorf("create queue %s: %w", id, err)
	}
	got, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return fmt.Errorf("queue %s: arn: %w", id, err)
	}
	vis := 30 // the SQS default
	if v, ok := attrs["VisibilityTimeout"]; ok {
		if vis, err = strconv.Atoi(v); err != nil {
			return fmt.Errorf("queue %s: VisibilityTimeout %q: %w", id, v, err)
		}
	}
	c.visibility[id] = vis
	c.refs.queues[id] = Queue{Name: name, URL: aws.ToString(out.QueueUrl), ARN: got.Attributes["QueueArn"]}
	return nil
}

// queueOrder orders queues so that every dead-letter queue is created before the queues that
// redrive to it.
func queueOrder(t *Template) ([]string, error) {
	deps := map[string][]string{}
	for _, id := range t.Queues {
		target := lookup(lookup(t.Properties[id], "RedrivePolicy"), "deadLetterTargetArn")
		if dep := referencedResource(target); dep != "" {
			deps[id] = append(deps[id], dep)
		}
	}
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(id string) error
	visit = func(id string) error {
		switch state[id] {
		case 1:
			return fmt.Errorf("queue %s: redrive cycle", id)
		case 2:
			return nil
		}
		state[id] = 1
		for _, d := range deps[id] {
			if t.Types[d] == typeQueue {
				if err := visit(d); err != nil {
					return err
				}
			}
		}
		state[id] = 2
		order = append(order, id)
		return nil
	}
	for _, id := range t.Queues {
		if err := visit(id); err != nil {
			return nil, err
		}
	}
	return order, nil
}

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
