module github.com/onceflow/onceflow

go 1.26.8

require (
	github.com/aws/aws-lambda-go v1.55.1
	github.com/aws/aws-sdk-go-v2/service/dynamodb v1.74.0
)

require github.com/aws/smithy-go v1.28.9 // indirect
