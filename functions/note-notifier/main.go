// Command note-notifier consumes note.created events from its own FIFO queue and POSTs one
// notification per note to a webhook, with an Idempotency-Key derived from the idempotency
// key, under a fenced lease (idempotency.LeasedConsumer): a crash between the call and its
// completion repeats the call with the same key, and nothing else repeats it.
//
// Environment: IDEMPOTENCY_TABLE and WEBHOOK_URL (required), CONSUMER_NAME (default
// note-notifier), DEAD_LETTER_QUEUE_URL (malformed and permanently refused messages go there;
// unset: SQS's redrive policy moves them), LOG_LEVEL (default info). The SDK finds local
// endpoints through AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS.
package main

import (
	"cmp"
	"context"
	"errors"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/internal/batch"
	"github.com/onceflow/onceflow/internal/deadletter"
	"github.com/onceflow/onceflow/internal/idempotency"
	"github.com/onceflow/onceflow/internal/logging"
	"github.com/onceflow/onceflow/internal/metrics"
	"github.com/onceflow/onceflow/internal/notify"
)

func main() {
	logger := logging.New(os.Stdout, os.Getenv("LOG_LEVEL"))
	name := cmp.Or(os.Getenv("CONSUMER_NAME"), "note-notifier")
	table, dlqURL := os.Getenv("IDEMPOTENCY_TABLE"), os.Getenv("DEAD_LETTER_QUEUE_URL")
	aws, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		logger.Error("load AWS configuration", "error", err)
		os.Exit(1)
	}
	m := metrics.New(os.Stdout, "onceflow", map[string]string{"Consumer": name})
	hook, err := notify.New(notify.Config{URL: os.Getenv("WEBHOOK_URL")})
	consumer, cerr := idempotency.NewLeased(dynamodb.NewFromConfig(aws), hook, idempotency.LeaseConfig{
		Config: idempotency.Config{Name: name, Table: table, Logger: logger, Metrics: m}})
	if err = errors.Join(err, cerr); err != nil {
		logger.Error("invalid configuration", "error", err)
		os.Exit(1)
	}
	cfg := batch.Config{Logger: logger, Metrics: m}
	if dlqURL != "" {
		cfg.DeadLetter = deadletter.New(sqs.NewFromConfig(aws), dlqURL)
	}
	p, err := batch.New(consumer, cfg)
	if err != nil {
		logger.Error("wire note-notifier", "error", err)
		os.Exit(1)
	}
	lambda.Start(p.Handle)
}
