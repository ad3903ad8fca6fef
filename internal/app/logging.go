package app

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// NewLogger returns a JSON logger writing to w at level ("debug", "info", "warn", "error"; anything
// else means info). Records logged with a Lambda context carry its request id.
func NewLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(requestID{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})})
}

// requestID adds "requestId" to records whose context is a Lambda invocation's.
type requestID struct{ slog.Handler }

func (h requestID) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		r.AddAttrs(slog.String("requestId", lc.AwsRequestID))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestID) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestID{h.Handler.WithAttrs(attrs)}
}

func (h requestID) WithGroup(name string) slog.Handler {
	return requestID{h.Handler.WithGroup(name)}
}
