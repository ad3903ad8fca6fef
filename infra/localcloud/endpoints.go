package localcloud

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/internal/localaws"
)

// Endpoints is what a running local cloud offers; Start returns it and writes it to
// StateDir/endpoints.json.
type Endpoints struct {
	// APIURL is the base URL of the local HTTP API (no trailing slash), "" without HttpApi events.
	APIURL string `json:"apiUrl,omitempty"`
	// Issuer is the local OpenID Connect issuer (its iss claim; discovery at
	// Issuer + "/.well-known/openid-configuration"), whose tokens the API's JWT authorizers
	// accept. TokenURL issues them: POST {"sub":"alice","scope":"notes.write notes.read"}
	// answers {"access_token":"<JWT>","token_type":"Bearer","expires_in":3600}.
	Issuer   string `json:"issuer"`
	TokenURL string `json:"tokenUrl"`
	// LambdaURL serves the Lambda Invoke API for every function by logical id
	// (POST /2015-03-31/functions/{LogicalId}/invocations), through the environment pool.
	LambdaURL string `json:"lambdaUrl"`
	// DynamoDB, Streams and SQS are the emulator endpoints (Streams is DynamoDB's).
	DynamoDB string `json:"dynamodb"`
	Streams  string `json:"dynamodbStreams"`
	SQS      string `json:"sqs"`
	// Kinesis is the kinesalite endpoint, when the template has Kinesis streams or the cloud
	// was given one.
	Kinesis string `json:"kinesis,omitempty"`
	Region  string `json:"region"`
	// Queues, Tables and KinesisStreams are the local resources by logical id.
	Queues         map[string]Queue         `json:"queues"`
	Tables         map[string]Table         `json:"tables"`
	KinesisStreams map[string]KinesisStream `json:"kinesisStreams,omitempty"`
	// Buckets are the local S3 buckets by logical id, on fauxqs's S3 at the SQS endpoint.
	Buckets map[string]Bucket `json:"buckets,omitempty"`
	// Functions lists the process ids of each function's execution environments at start.
	Functions map[string][]int `json:"functions"`
	// Outputs are the template's Outputs the local cloud resolves, by key (queue URLs, table
	// names, the relay's routes): what a deployed stack's outputs are to the operator's tool.
	Outputs map[string]string `json:"outputs,omitempty"`
	// Gatekeeper is the endpoint of every service (the request's SigV4 credential scope names
	// it) where each call is authorised as AWS would authorise it for its caller, then passed to
	// the emulator: the functions call AWS there. "" with Config.Ungated.
	Gatekeeper string `json:"gatekeeper,omitempty"`
	// Principals are the callers the gatekeeper knows, by logical id: each function (its
	// execution role as SAM creates it) and each AWS::IAM::ManagedPolicy of the template (a
	// role with that policy alone), with local credentials to call as one of them (ConfigAs).
	// The emulator endpoints above take the cloud's own identity and authorise nothing.
	Principals map[string]Principal `json:"principals,omitempty"`
}

// ReadEndpoints reads the endpoints.json a running local cloud wrote into stateDir.
func ReadEndpoints(stateDir string) (Endpoints, error) {
	var e Endpoints
	b, err := os.ReadFile(filepath.Join(stateDir, "endpoints.json"))
	if err != nil {
		return e, fmt.Errorf("read endpoints (is the local cloud up? `localcloud up`; in this repository: make up): %w", err)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("read endpoints: %w", err)
	}
	return e, nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// AWSConfig is the configuration of the local identity: region and static credentials.
// Clients built from it need a BaseEndpoint.
func AWSConfig() aws.Config { return localaws.Config() }

// DynamoDBClient returns a DynamoDB client for the local emulator.
func (e Endpoints) DynamoDBClient() *dynamodb.Client {
	return dynamodb.NewFromConfig(AWSConfig(), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(e.DynamoDB) })
}

// StreamsClient returns a DynamoDB Streams client for the local emulator.
func (e Endpoints) StreamsClient() *dynamodbstreams.Client {
	ep := e.Streams
	if ep == "" {
		ep = e.DynamoDB
	}
	return dynamodbstreams.NewFromConfig(AWSConfig(), func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(ep) })
}

// SQSClient returns an SQS client for the local emulator.
func (e Endpoints) SQSClient() *sqs.Client {
	return sqs.NewFromConfig(AWSConfig(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(e.SQS) })
}

// LambdaClient returns a Lambda client for LambdaURL, with a single attempt per Invoke so a
// crashed invoke is never silently run again.
func (e Endpoints) LambdaClient() *lambda.Client {
	return newLambdaClient(e.LambdaURL)
}

func newLambdaClient(endpoint string) *lambda.Client {
	return lambda.NewFromConfig(AWSConfig(), func(o *lambda.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.RetryMaxAttempts = 1
	})
}
