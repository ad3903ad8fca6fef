package app

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/onceflow/onceflow/pkg/xray"
)

// NewLogger returns a JSON logger writing to w at level ("debug", "info", "warn", "error";
// anything else means info), with the keys of Lambda's JSON log format and of Powertools for
// AWS Lambda, which is what people search CloudWatch Logs Insights by: "timestamp", "level",
// "message", "service" on every line and, on lines logged with an invocation's context,
// "function_name", "function_request_id", "cold_start" (true during the first invocation of
// the execution environment) and "xray_trace_id" (the Root of the context's trace header: the
// invocation's, or the message's in a consumer, see package xray).
//
// aws-lambda-go's lambdacontext.NewLogHandler is not used as is: it writes to os.Stdout only,
// reads its level from AWS_LAMBDA_LOG_LEVEL, and adds "requestId" but no trace id or cold
// start. Its ReplaceAttr (time to timestamp, msg to message) is.
func NewLogger(w io.Writer, level, service string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		l = slog.LevelInfo
	}
	json := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: lambdacontext.ReplaceAttr})
	return slog.New(invocation{Handler: json, first: new(atomic.Pointer[string])}).With("service", service)
}

// invocation adds what the context says of the Lambda invocation to each record.
type invocation struct {
	slog.Handler
	first *atomic.Pointer[string] // request id of the environment's first invocation
}

func (h invocation) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		h.first.CompareAndSwap(nil, &lc.AwsRequestID)
		r.AddAttrs(slog.String("function_name", lambdacontext.FunctionName),
			slog.String("function_request_id", lc.AwsRequestID),
			slog.Bool("cold_start", *h.first.Load() == lc.AwsRequestID))
	}
	if id := xray.TraceID(xray.FromContext(ctx)); id != "" {
		r.AddAttrs(slog.String("xray_trace_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h invocation) WithAttrs(attrs []slog.Attr) slog.Handler {
	return invocation{Handler: h.Handler.WithAttrs(attrs), first: h.first}
}

func (h invocation) WithGroup(name string) slog.Handler {
	return invocation{Handler: h.Handler.WithGroup(name), first: h.first}
}
