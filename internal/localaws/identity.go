package localaws

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// The fixed identity of local runs: the local cloud itself, tests and their clients use it at
// the emulators, which authorise nothing. (The local cloud's functions and pollers call with
// their own keys through its gatekeeper; DynamoDB Local runs with -sharedDb, so that every key
// sees one database.)
const (
	Region          = "us-east-1"
	Account         = "000000000000"
	AccessKeyID     = "local"
	SecretAccessKey = "local"
)

// Config is the SDK configuration of the local identity: region and static credentials.
// Clients built from it need a BaseEndpoint.
func Config() aws.Config {
	return aws.Config{
		Region:      Region,
		Credentials: credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""),
	}
}
