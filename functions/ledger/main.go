// Command ledger consumes account.credited and account.debited events from the ledger FIFO queue
// and applies each to its account's balance exactly once.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/pkg/metrics"
)

func main() {
	app.Start("ledger", config.LoadConsumer, func(cfg config.Consumer, awsCfg aws.Config, logger *slog.Logger) (any, error) {
		p, err := app.NewLedger(cfg, dynamodb.NewFromConfig(awsCfg), sqs.NewFromConfig(awsCfg), logger,
			metrics.New(os.Stdout, app.Namespace, map[string]string{"Consumer": cfg.Name}))
		if err != nil {
			return nil, err
		}
		return p.Handle, nil
	})
}
