// Command note-tagger consumes note.created events from the notes FIFO queue and writes each
// note's tags exactly once.
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
	app.Start("note-tagger", config.LoadConsumer, func(cfg config.Consumer, awsCfg aws.Config, logger *slog.Logger) (any, error) {
		p, err := app.NewNoteTagger(cfg, dynamodb.NewFromConfig(awsCfg), sqs.NewFromConfig(awsCfg), logger,
			metrics.New(os.Stdout, app.Namespace, map[string]string{"Consumer": cfg.Name}))
		if err != nil {
			return nil, err
		}
		return p.Handle, nil
	})
}
