package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// endpoints is the part of the endpoints.json that `make up` writes which the tool reads: the
// emulators' endpoints, the resources by logical id, and the template's outputs as the local
// cloud resolves them.
type endpoints struct {
	DynamoDB string `json:"dynamodb"`
	SQS      string `json:"sqs"`
	Region   string `json:"region"`
	Queues   map[string]struct {
		URL string `json:"url"`
	} `json:"queues"`
	Tables map[string]struct {
		Name string `json:"name"`
	} `json:"tables"`
	Outputs map[string]string `json:"outputs"`
	// Gatekeeper authorises every call as the principal whose local credentials sign it.
	Gatekeeper string `json:"gatekeeper"`
	Principals map[string]struct {
		AccessKeyID     string `json:"accessKeyId"`
		SecretAccessKey string `json:"secretAccessKey"`
	} `json:"principals"`
}

// readEndpoints reads stateDir/endpoints.json.
func readEndpoints(stateDir string) (endpoints, error) {
	var e endpoints
	path := filepath.Join(stateDir, "endpoints.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return e, fmt.Errorf("read the local cloud's endpoints (is it up? `make up`): %w", err)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("read %s: %w", path, err)
	}
	if e.DynamoDB == "" || e.SQS == "" {
		return e, fmt.Errorf("read %s: no dynamodb or sqs endpoint", path)
	}
	return e, nil
}

// stack is the local cloud's resources by logical id, with the outputs' routes and consumers.
func (e endpoints) stack(from string) *stack {
	s := stackFromOutputs(from, e.Outputs)
	for id, q := range e.Queues {
		s.queues[id] = q.URL
	}
	for id, t := range e.Tables {
		s.tables[id] = t.Name
	}
	return s
}

// clients returns SQS, DynamoDB and S3 clients of the emulators (fauxqs serves S3 on its SQS
// port, path-style), signing with creds (which the emulators take whatever they are,
// authorising nothing); or, as principal as of the local cloud, clients of its gatekeeper with
// that principal's local credentials, which authorises each call as AWS would.
func (e endpoints) clients(creds aws.CredentialsProvider, as string) (*sqs.Client, *dynamodb.Client, *s3.Client, error) {
	cfg := aws.Config{Region: e.Region, Credentials: creds}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	sqsURL, ddbURL, s3URL := e.SQS, e.DynamoDB, e.SQS
	if as != "" {
		p, ok := e.Principals[as]
		if e.Gatekeeper == "" || !ok {
			names := make([]string, 0, len(e.Principals))
			for n := range e.Principals {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, nil, nil, usageError(fmt.Sprintf("--as %s: the local cloud has no such principal (it has %s)", as, strings.Join(names, ", ")))
		}
		cfg.Credentials = credentials.NewStaticCredentialsProvider(p.AccessKeyID, p.SecretAccessKey, "")
		sqsURL, ddbURL, s3URL = e.Gatekeeper, e.Gatekeeper, e.Gatekeeper
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(sqsURL) }),
		dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(ddbURL) }),
		s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint, o.UsePathStyle = aws.String(s3URL), true }), nil
}
