package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/logging"
)

// LoadAWS loads the AWS configuration from the environment Lambda gives a function (which
// honours AWS_ENDPOINT_URL_<SERVICE> for local runs), with the SDK's own log lines (a retry
// given up, a connection it could not reuse) written through logger: JSON records with a
// timestamp and the invocation's keys, like the function's, not the SDK's plain text.
func LoadAWS(ctx context.Context, logger *slog.Logger) (aws.Config, error) {
	return awsconfig.LoadDefaultConfig(ctx, awsconfig.WithLogger(sdkLogger{ctx: context.Background(), log: logger}))
}

// NewDynamoDB returns the DynamoDB client of a function. Against an endpoint on loopback
// (DynamoDB Local) it does not validate response checksums: DynamoDB Local's error responses
// carry no x-amz-crc32 header, and the SDK would log "failed to close HTTP response body ...
// response did not match expected checksum" on every conditional failure, every duplicate
// and rejection (aws-sdk-go-v2 #3545). Anywhere else, AWS included, the check stays.
func NewDynamoDB(cfg aws.Config) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if o.BaseEndpoint != nil && onLoopback(*o.BaseEndpoint) {
			o.DisableValidateResponseChecksum = true
		}
	})
}

// onLoopback reports whether endpoint (a URL) names a loopback host.
func onLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(u.Hostname())
	return err == nil && ip.IsLoopback()
}

// sdkLogger writes the SDK's log lines through slog, in the context of the call that made
// them (the SDK asks for it with WithContext).
type sdkLogger struct {
	ctx context.Context
	log *slog.Logger
}

func (l sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	level := slog.LevelInfo
	switch c {
	case logging.Warn:
		level = slog.LevelWarn
	case logging.Debug:
		level = slog.LevelDebug
	}
	l.log.Log(l.ctx, level, fmt.Sprintf(format, v...), "source", "aws-sdk")
}

func (l sdkLogger) WithContext(ctx context.Context) logging.Logger {
	return sdkLogger{ctx: ctx, log: l.log}
}
