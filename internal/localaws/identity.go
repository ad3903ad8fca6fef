package localaws

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// The fixed identity of local runs: functions, pollers, tests and their clients all use it, so
// that DynamoDB Local (which partitions data by access key and region) shows everyone one
// database.
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
