// Command outbox-relay publishes new outbox items from the app table's stream to their FIFO
// queues, with the event id as deduplication id.
package main

import (
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/onceflow/onceflow/internal/app"
	"github.com/onceflow/onceflow/internal/config"
	"github.com/onceflow/onceflow/pkg/metrics"
)

func main() {
	app.Start("outbox-relay", config.LoadRelay, func(cfg config.Relay, awsCfg aws.Config, logger *slog.Logger) (any, error) {
		p, err := app.NewRelay(cfg, sqs.NewFromConfig(awsCfg), logger,
			metrics.New(os.Stdout, app.Namespace, map[string]string{"Function": "outbox-relay"}))
		if err != nil {
			return nil, err
		}
		return p.Handle, nil
	})
}
