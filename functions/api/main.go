// Command api is the HTTP API function: notes, credits and debits written with their outbox
// events, and reads of notes, tags and accounts.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/internal/logging"
)

func main() {
	cfg, err := config.LoadAPI(os.Getenv)
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
	h, err := app.NewAPI(cfg, dynamodb.NewFromConfig(aws), logger)
	if err != nil {
		logger.Error("wire api", "error", err)
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}
