// Command ledger consumes account.credited and account.debited events from the ledger FIFO queue
// and applies each to its account's balance exactly once.
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
	cfg, err := config.LoadConsumer(os.Getenv)
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
	p, err := app.NewLedger(cfg, dynamodb.NewFromConfig(aws), sqs.NewFromConfig(aws), logger, m)
	if err != nil {
		logger.Error("wire ledger", "error", err)
		os.Exit(1)
	}
	lambda.Start(p.Handle)
}
