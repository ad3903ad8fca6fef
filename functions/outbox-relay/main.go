// Command outbox-relay publishes new outbox items from the app table's stream to their FIFO
// queues, with the event id as deduplication id.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/logging"
	"github.com/onceflow/onceflow/internal/metrics"
)

func main() {
	cfg, err := config.LoadRelay(os.Getenv)
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
	m := metrics.New(os.Stdout, app.Namespace, map[string]string{"Function": "outbox-relay"})
	relay, err := app.NewRelay(cfg, sqs.NewFromConfig(aws), logger, m)
	if err != nil {
		logger.Error("wire outbox-relay", "error", err)
		os.Exit(1)
	}
	lambda.Start(relay.Handle)
}
