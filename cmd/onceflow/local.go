package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

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
// port, path-style). The local cloud's emulators take any static credentials.
func (e endpoints) clients() (*sqs.Client, *dynamodb.Client, *s3.Client) {
	cfg := aws.Config{Region: e.Region, Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(e.SQS) }),
		dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(e.DynamoDB) }),
		s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint, o.UsePathStyle = aws.String(e.SQS), true })
}
