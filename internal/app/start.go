package app

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/onceflow/onceflow/pkg/metrics"
)

// Handler is a function's handler: its Handle method is what Lambda invokes, with the event
// type In and the response type Out checked at compile time.
type Handler[In, Out any] interface {
	Handle(ctx context.Context, event In) (Out, error)
}

// Start is the body of every function's main. Once, at init, it loads the configuration from
// the environment with load, builds the JSON logger, the AWS configuration (LoadAWS), the SDK
// clients (NewDynamoDB for DynamoDB) and the EMF metrics recorder
// (dimension Consumer=<name> for a consumer, else Function=<function name>), has build make the handler from them, and hands its Handle method
// to the Lambda runtime. A problem at any step is logged with the step and ends the process
// before it serves an invocation: Lambda reports the init failure.
func Start[C interface{ Level() string }, In, Out any, H Handler[In, Out]](name string,
	load func(getenv func(string) string) (C, error), build func(cfg C, d Deps) (H, error)) {
	cfg, err := load(os.Getenv)
	logger := NewLogger(os.Stdout, cfg.Level(), Namespace)
	if err != nil {
		exit(logger, "invalid configuration", err)
	}
	awsCfg, err := LoadAWS(context.Background(), logger)
	if err != nil {
		exit(logger, "load AWS configuration", err)
	}
	dims := map[string]string{"Function": name}
	if c, ok := any(cfg).(interface{ ConsumerName() string }); ok {
		dims = map[string]string{"Consumer": c.ConsumerName()}
	}
	h, err := build(cfg, Deps{DynamoDB: NewDynamoDB(awsCfg), SQS: sqs.NewFromConfig(awsCfg),
		S3:  s3.NewFromConfig(awsCfg),
		SSM: ssm.NewFromConfig(awsCfg), Logger: logger,
		Metrics: metrics.NewEMF(os.Stdout, Namespace, dims)})
	if err != nil {
		exit(logger, "wire "+name, err)
	}
	lambda.StartHandlerFunc(h.Handle)
}

func exit(logger *slog.Logger, step string, err error) {
	logger.Error(step, "error", err)
	os.Exit(1)
}
