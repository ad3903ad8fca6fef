package testkit

import (
	"context"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/pkg/testkit/emulator"
)

// The environment variables holding the emulators' URLs. A test whose emulator's variable is
// unset starts the emulator (Main); `make test` in the onceflow repository starts them once
// for every package and sets the variables.
const (
	EndpointVariable        = "DYNAMODB_ENDPOINT" // Amazon DynamoDB Local
	SQSEndpointVariable     = "SQS_ENDPOINT"      // fauxqs (SQS, and S3 on the same port)
	KinesisEndpointVariable = "KINESIS_ENDPOINT"  // kinesalite
)

// kinds are the emulators by their variables.
var kinds = map[string]*emulator.Kind{
	EndpointVariable:        emulator.DynamoDB,
	SQSEndpointVariable:     emulator.SQS,
	KinesisEndpointVariable: emulator.Kinesis,
}

// Emulator returns the URL of the emulator whose endpoint is in the environment variable
// (EndpointVariable, SQSEndpointVariable, KinesisEndpointVariable). When the variable is unset,
// it starts the pinned emulator (package emulator), once per test binary, and sets the variable
// to its URL; the test binary must run its tests through Main, which stops what it started.
// Under `go test -short` it skips the test instead, saying how to run it. A test that needs an
// emulator never passes without it: if the emulator cannot start, the test fails, saying why.
func Emulator(tb testing.TB, variable string) string {
	tb.Helper()
	SkipShort(tb)
	if url := os.Getenv(variable); url != "" {
		return url
	}
	kind, ok := kinds[variable]
	if !ok {
		tb.Fatalf("testkit.Emulator(%q): not an emulator's variable (EndpointVariable, SQSEndpointVariable, KinesisEndpointVariable)", variable)
	}
	url, err := started.start(kind, variable)
	if err != nil {
		tb.Fatalf("%s is not set, and %s could not start for this test binary: %v", variable, kind.Name, err)
	}
	return url
}

// SkipShort skips a test under `go test -short`: one that needs the emulators, or starts
// processes of its own (a local cloud), saying how to run it.
func SkipShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs the emulators: skipped under -short; `go test` without -short starts them (`make test` in the onceflow repository)")
	}
}

// SQS returns a client for the SQS emulator at $SQS_ENDPOINT, with fixed local credentials
// and region; opts adjust it. See Emulator for when it starts the emulator or skips the test.
func SQS(tb testing.TB, opts ...func(*sqs.Options)) *sqs.Client {
	tb.Helper()
	url := Emulator(tb, SQSEndpointVariable)
	return sqs.NewFromConfig(Config(), append([]func(*sqs.Options){func(o *sqs.Options) { o.BaseEndpoint = aws.String(url) }}, opts...)...)
}

// Config returns the SDK configuration of testkit's clients: region us-east-1 and static
// credentials (DynamoDB Local without -sharedDb keeps a database per access key and region).
// Build a client of another service from it, with the emulator's URL as its BaseEndpoint.
func Config() aws.Config {
	return aws.Config{Region: "us-east-1", Credentials: aws.CredentialsProviderFunc(
		func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "testkit", SecretAccessKey: "testkit", Source: "testkit"}, nil
		})}
}
