// Command note-notifier consumes note.created events from its own FIFO queue and POSTs one
// notification per note to a webhook, with an Idempotency-Key derived from the idempotency
// key, under a fenced lease (idempotency.LeasedConsumer): a crash between the call and its
// completion repeats the call with the same key, and nothing else repeats it.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/logging"
	"github.com/onceflow/onceflow/internal/metrics"
)

func main() {
	cfg, err := config.LoadNotifier(os.Getenv)
	logger := logging.New(os.Stdout, cfg.LogLevel)
	if err != nil {
		logger.Error("invalid configuration", "error", err)
		os.Exit(1)
	}
	aws, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		logger.Error("load AWS configuration", "error", err)
		os.Exit(1)
	}
	m := metrics.New(os.Stdout, app.Namespace, map[string]string{"Consumer": cfg.Name})
	p, err := app.NewNoteNotifier(cfg, dynamodb.NewFromConfig(aws), sqs.NewFromConfig(aws), logger, m)
	if err != nil {
		logger.Error("wire note-notifier", "error", err)
		os.Exit(1)
	}
	lambda.Start(p.Handle)
}
