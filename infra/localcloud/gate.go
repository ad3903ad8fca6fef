package localcloud

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/infra/gatekeeper"
)

// startGate starts the gatekeeper (Config.Ungated: none) once the resources exist: one
// endpoint for the functions, in front of the emulators (through the fault proxies under
// Chaos), and one for the cloud's event source pollers, which call as their function does, as
// Lambda's do with its execution role, but are not cut off by Chaos faults and outages.
func (c *Cloud) startGate(ctx context.Context) error {
	if c.cfg.Ungated {
		return nil
	}
	principals, creds, err := c.principals()
	if err != nil {
		return err
	}
	if err := c.checkSharedDB(ctx, creds); err != nil {
		return err
	}
	c.gate, err = gatekeeper.New(gatekeeper.Config{Region: Region, Account: Account, Principals: principals,
		Table: c.tableSchema, CanonicalARN: canonicalARN, Logger: c.log})
	if err != nil {
		return fmt.Errorf("gatekeeper: %w", err)
	}
	ddb, sq := c.functionEndpoints()
	direct := map[string]string{"dynamodb": c.endpoints.DynamoDB, "sqs": c.endpoints.SQS, "s3": c.endpoints.SQS, "ssm": c.ssmURL}
	if c.endpoints.Kinesis != "" {
		direct["kinesis"] = c.endpoints.Kinesis
	}
	faulty := map[string]string{}
	for k, v := range direct {
		faulty[k] = v
	}
	faulty["dynamodb"], faulty["sqs"] = ddb, sq
	for _, e := range []struct {
		upstreams map[string]string
		url       *string
	}{{faulty, &c.endpoints.Gatekeeper}, {direct, &c.pollerGate}} {
		h, err := c.gate.Handler(e.upstreams)
		if err != nil {
			return err
		}
		if *e.url, err = c.serve(h); err != nil {
			return err
		}
	}
	c.endpoints.Principals = creds
	return nil
}

// tableSchema is a table's key schema for the gatekeeper's dynamodb:LeadingKeys, from the
// emulator.
func (c *Cloud) tableSchema(ctx context.Context, name string) (gatekeeper.Table, error) {
	out, err := c.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		return gatekeeper.Table{}, err
	}
	t := gatekeeper.Table{Indexes: map[string]string{}}
	for _, k := range out.Table.KeySchema {
		if k.KeyType == "HASH" {
			t.HashKey = aws.ToString(k.AttributeName)
		}
	}
	for _, gsi := range out.Table.GlobalSecondaryIndexes {
		for _, k := range gsi.KeySchema {
			if k.KeyType == "HASH" {
				t.Indexes[aws.ToString(gsi.IndexName)] = aws.ToString(k.AttributeName)
			}
		}
	}
	for _, lsi := range out.Table.LocalSecondaryIndexes {
		t.Indexes[aws.ToString(lsi.IndexName)] = t.HashKey
	}
	return t, nil
}

// checkSharedDB makes sure DynamoDB Local shows a function's key the database the cloud
// created its tables in: without -sharedDb it keeps one database per access key, and each
// function, calling with its own key, would see none of the tables.
func (c *Cloud) checkSharedDB(ctx context.Context, creds map[string]Principal) error {
	if len(c.refs.tables) == 0 || len(creds) == 0 {
		return nil
	}
	var probe Principal
	for _, p := range creds {
		probe = p
		break
	}
	table := c.refs.tables[c.tmpl.Tables[0]].Name
	db := dynamodb.NewFromConfig(c.configAs(probe, c.endpoints.DynamoDB))
	if _, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}); err != nil {
		return fmt.Errorf("DynamoDB Local at %s does not show table %s to another access key than the cloud's (%v): "+
			"start it with -sharedDb (infra/emulators.sh does), since every function calls with its own key", c.endpoints.DynamoDB, table, err)
	}
	return nil
}

// configAs is the SDK configuration of a principal's local credentials at endpoint.
func (c *Cloud) configAs(p Principal, endpoint string) aws.Config {
	return aws.Config{Region: Region, BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(p.AccessKeyID, p.SecretAccessKey, "")}
}

// pollerClients are the clients an event source poller of function uses: its role's
// credentials through the pollers' gatekeeper endpoint, or the cloud's own identity straight
// to the emulators with Config.Ungated.
type pollerClients struct {
	sqs     *sqs.Client
	streams *dynamodbstreams.Client
	kinesis *kinesis.Client
}

func (c *Cloud) pollerClients(function string) pollerClients {
	if c.gate == nil {
		pc := pollerClients{sqs: c.sqs, streams: c.endpoints.StreamsClient()}
		if c.endpoints.Kinesis != "" {
			pc.kinesis = c.endpoints.KinesisClient()
		}
		return pc
	}
	cfg := c.configAs(c.endpoints.Principals[function], c.pollerGate)
	return pollerClients{sqs: sqs.NewFromConfig(cfg), streams: dynamodbstreams.NewFromConfig(cfg), kinesis: kinesis.NewFromConfig(cfg)}
}

// Access returns what the gatekeeper decided so far; the zero Stats with Config.Ungated.
func (c *Cloud) Access() gatekeeper.Stats {
	if c.gate == nil {
		return gatekeeper.Stats{}
	}
	return c.gate.Stats()
}

// ConfigAs returns the SDK configuration of principal (a function's or a managed policy's
// logical id; Endpoints.Principals) through the gatekeeper: a client built from it is
// authorised as that principal would be on AWS.
func (e Endpoints) ConfigAs(principal string) (aws.Config, error) {
	if e.Gatekeeper == "" {
		return aws.Config{}, errors.New("the local cloud runs without its gatekeeper (Config.Ungated)")
	}
	p, ok := e.Principals[principal]
	if !ok {
		return aws.Config{}, fmt.Errorf("no principal %s: the template's functions and managed policies are %v", principal, sortedKeys(e.Principals))
	}
	return aws.Config{Region: e.Region, BaseEndpoint: aws.String(e.Gatekeeper),
		Credentials: credentials.NewStaticCredentialsProvider(p.AccessKeyID, p.SecretAccessKey, "")}, nil
}
