package app

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/onceflow/onceflow/internal/logging"
)

// Start is the body of every function's main. Once, at init, it loads the configuration from
// the environment with load, builds the JSON logger and the AWS configuration (which honours
// AWS_ENDPOINT_URL_<SERVICE> for local runs), has wire build the handler from them, and hands
// it to lambda.Start. A problem at any step is logged with the step and ends the process
// before it serves an invocation: Lambda reports the init failure.
func Start[C interface{ Level() string }](name string, load func(getenv func(string) string) (C, error),
	wire func(cfg C, awsCfg aws.Config, logger *slog.Logger) (handler any, err error)) {
	cfg, err := load(os.Getenv)
	logger := logging.New(os.Stdout, cfg.Level()).With("function", name)
	if err != nil {
		exit(logger, "invalid configuration", err)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		exit(logger, "load AWS configuration", err)
	}
	h, err := wire(cfg, awsCfg, logger)
	if err != nil {
		exit(logger, "wire "+name, err)
	}
	lambda.Start(h)
}

func exit(logger *slog.Logger, step string, err error) {
	logger.Error(step, "error", err)
	os.Exit(1)
}
