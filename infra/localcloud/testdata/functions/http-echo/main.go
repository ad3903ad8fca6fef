// Command http-echo is a test function: it answers an HTTP API request with what it saw and a
// few environment variables, status 201; the path /echo/panic makes it panic and /echo/sleep
// outlives its timeout. It logs one JSON line per request.
package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	lambda.Start(func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		log.Info("echo request", "id", req.PathParameters["id"], "path", req.RawPath)
		switch req.PathParameters["id"] {
		case "panic":
			panic("asked to panic")
		case "sleep":
			time.Sleep(10 * time.Second)
		}
		env := map[string]string{}
		for _, k := range []string{"STAGE", "TABLE_NAME", "GREETING", "STREAM_ARN", "CONSUMER", "PAYLOADS", "AWS_ENDPOINT_URL_S3", "AWS_LAMBDA_FUNCTION_TIMEOUT",
			"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_NAME", "AWS_REGION"} {
			env[k] = os.Getenv(k)
		}
		body, _ := json.Marshal(map[string]any{"request": req, "env": env})
		return events.APIGatewayV2HTTPResponse{StatusCode: 201, Headers: map[string]string{"Content-Type": "application/json", "X-Echo": "yes"},
			Body: string(body)}, nil
	})
}
