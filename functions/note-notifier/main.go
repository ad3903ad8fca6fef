// Command note-notifier consumes note.created events from its own FIFO queue and POSTs one
// notification per note to a webhook, with an Idempotency-Key derived from the idempotency
// key, under a fenced lease (idempotency.LeasedConsumer): a crash between the call and its
// completion repeats the call with the same key, and nothing else repeats it.
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
	app.Start("note-notifier", config.LoadNotifier, func(cfg config.Notifier, awsCfg aws.Config, logger *slog.Logger) (any, error) {
		p, err := app.NewNoteNotifier(cfg, dynamodb.NewFromConfig(awsCfg), sqs.NewFromConfig(awsCfg), logger,
			metrics.New(os.Stdout, app.Namespace, map[string]string{"Consumer": cfg.Name}))
		if err != nil {
			return nil, err
		}
		return p.Handle, nil
	})
}
