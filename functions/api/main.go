// Command api is the HTTP API function: notes, credits and debits written with their outbox
// events, and reads of notes, tags and accounts.
package main

import (
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
)

func main() {
	app.Start("api", config.LoadAPI, func(cfg config.API, awsCfg aws.Config, logger *slog.Logger) (any, error) {
		h, err := app.NewAPI(cfg, dynamodb.NewFromConfig(awsCfg), logger)
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}
