// Package testkit tests a handler of the engine against a real DynamoDB (Amazon's DynamoDB
// Local): a client from DYNAMODB_ENDPOINT, the idempotency table and your own tables created
// for the test and deleted after it, SQS messages and FIFO batches with the attributes the
// engine reads, the bodies of EventBridge, SNS and S3, Kinesis and DynamoDB Streams records,
// the redeliveries worth testing (the same message again, the event under a new message id, a
// redrive as it arrives, the event after its record expired, a stream's batch from its
// checkpoint), and a consumer of each port (NewConsumer for SQS, NewDynamoDBConsumer,
// NewKinesisConsumer) whose in-memory cache is off unless asked for, so that a redelivery is
// answered by DynamoDB's condition, as it is when it reaches another execution environment.
package testkit
