package xray

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// SQSAttribute is the SQS message system attribute that carries a trace header: set it with
// SendMessage's MessageSystemAttributes, read it from events.SQSMessage.Attributes.
const SQSAttribute = "AWSTraceHeader"

// HTTPHeader is the HTTP header of a trace, and the header the Lambda Invoke API and the
// Runtime Interface Emulator take it from.
const HTTPHeader = "X-Amzn-Trace-Id"

// lambdaKey is the context key under which aws-lambda-go stores an invocation's trace header
// (lambda/invoke_loop.go: context.WithValue(ctx, "x-amzn-trace-id", traceID)).
const lambdaKey = "x-amzn-trace-id"

type key struct{}

// NewContext returns ctx carrying header, which then takes precedence over the invocation's
// own: a consumer gives each message the trace of the request that wrote its event. An empty
// header leaves ctx as it is.
func NewContext(ctx context.Context, header string) context.Context {
	if header == "" {
		return ctx
	}
	return context.WithValue(ctx, key{}, header)
}

// FromContext returns the trace header of ctx: the one NewContext put there, else the Lambda
// invocation's, else "".
func FromContext(ctx context.Context) string {
	if h, ok := ctx.Value(key{}).(string); ok {
		return h
	}
	h, _ := ctx.Value(lambdaKey).(string)
	return h
}

// TraceID returns the trace id of header, its Root ("1-5759e988-bd862e3fe1be46a994272793"),
// which is what X-Ray's console and Powertools' xray_trace_id log key show; "" when header has
// no Root.
func TraceID(header string) string {
	for field := range strings.SplitSeq(header, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(field), "Root="); ok {
			return v
		}
	}
	return ""
}

// NewHeader returns the header of a new sampled trace started at now, as API Gateway or
// Lambda start one for a request that carries none: Root=1-<epoch seconds, 8 hex>-<96 random
// bits, 24 hex>;Parent=<64 random bits, 16 hex>;Sampled=1.
func NewHeader(now time.Time) string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=1", uint32(now.Unix()),
		hex.EncodeToString(b[:12]), hex.EncodeToString(b[12:]))
}
