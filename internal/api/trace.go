package api

import (
	"context"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/onceflow/onceflow/pkg/xray"
)

// traced returns ctx with the request's trace header: the Lambda invocation's, which Lambda
// always sets, else the X-Amzn-Trace-Id header API Gateway passed in the event. The second is
// for runtimes that do not pass the invocation's trace on: the Runtime Interface Emulator
// (as pinned, and as `sam local` runs it) reads X-Amzn-Trace-Id from an invoke and drops it.
func traced(ctx context.Context, req events.APIGatewayV2HTTPRequest) context.Context {
	if xray.FromContext(ctx) != "" {
		return ctx
	}
	for k, v := range req.Headers {
		if strings.EqualFold(k, xray.HTTPHeader) && xray.TraceID(v) != "" {
			return xray.NewContext(ctx, v)
		}
	}
	return ctx
}
