package testkit

import (
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// The environment variables holding the emulators' URLs, which `infra/emulators.sh` (and so
// `make test`) sets after starting them.
const (
	EndpointVariable        = "DYNAMODB_ENDPOINT" // Amazon DynamoDB Local
	SQSEndpointVariable     = "SQS_ENDPOINT"      // fauxqs (SQS, and S3 on the same port)
	KinesisEndpointVariable = "KINESIS_ENDPOINT"  // kinesalite
)

// how says how to start each emulator, for a test that finds its variable empty.
var how = map[string]string{
	EndpointVariable: "Amazon DynamoDB Local (java -Djava.library.path=DynamoDBLocal_lib -jar DynamoDBLocal.jar -inMemory -port 8000, " +
		"or: docker run -p 8000:8000 amazon/dynamodb-local; then DYNAMODB_ENDPOINT=http://127.0.0.1:8000)",
	SQSEndpointVariable:     "an SQS emulator (npx fauxqs; then SQS_ENDPOINT=http://127.0.0.1:<its port>)",
	KinesisEndpointVariable: "a Kinesis emulator (npx kinesalite; then KINESIS_ENDPOINT=http://127.0.0.1:<its port>)",
}

// Emulator returns the URL of the emulator whose endpoint is in the environment variable
// (EndpointVariable, SQSEndpointVariable, KinesisEndpointVariable). Under `go test -short` it
// skips the test instead, saying how to run it; without the variable it fails the test, saying
// how to start the emulator: an emulator test never passes by not running.
func Emulator(tb testing.TB, variable string) string {
	tb.Helper()
	SkipShort(tb)
	url := os.Getenv(variable)
	if url == "" {
		tb.Fatalf("%s is not set: this test needs %s; in the onceflow repository `make test` (or `infra/emulators.sh go test ./...`) starts every emulator and sets it",
			variable, how[variable])
	}
	return url
}

// SkipShort skips a test under `go test -short`: one that needs the emulators, or starts
// processes of its own (a local cloud), saying how to run it.
func SkipShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs the emulators: skipped under -short; `make test` runs it with them")
	}
}

// SQS returns a client for the SQS emulator at $SQS_ENDPOINT, with fixed local credentials
// and region; opts adjust it. See Emulator for when it skips or fails the test.
func SQS(tb testing.TB, opts ...func(*sqs.Options)) *sqs.Client {
	tb.Helper()
	url := Emulator(tb, SQSEndpointVariable)
	return sqs.NewFromConfig(localConfig, append([]func(*sqs.Options){func(o *sqs.Options) { o.BaseEndpoint = aws.String(url) }}, opts...)...)
}

// localConfig is the SDK configuration of the emulators: a region and static credentials.
var localConfig = aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("testkit", "testkit", "")}
