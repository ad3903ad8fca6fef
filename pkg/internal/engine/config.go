package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/internal/table"
	"github.com/onceflow/onceflow/pkg/metrics"
)

// DB is idempotency.DB, the DynamoDB calls the engine makes. Each call the engine loops over
// itself carries Retry.single; the others go through retried, the one retry layer.
type DB interface {
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// DefaultRetention is idempotency.DefaultRetention, the one retention of what the engine keeps.
const DefaultRetention = table.Retention

// Config is idempotency.Config as the engine reads it (the field docs are there); the zero
// value of every field but Name and Table means its default.
type Config struct {
	Name, Table     string
	Retention       time.Duration
	CacheSize       int
	StorePayload    bool
	AfterDeadLetter GroupPolicy
	Retry           Retry
	Redecisions     int
	Logger          *slog.Logger
	Metrics         metrics.Recorder
	Now             func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.CacheSize == 0 {
		c.CacheSize = 1024
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = metrics.Discard
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	switch {
	case c.Redecisions == 0:
		c.Redecisions = DefaultRedecisions
	case c.Redecisions < 0:
		c.Redecisions = 0
	}
	c.Retry = c.Retry.withDefaults()
	return c
}

// Validate reports every problem with c.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("consumer name is required (Config.Name)"))
	}
	if strings.Contains(c.Name, table.KeySeparator) {
		errs = append(errs, fmt.Errorf("consumer name %q contains %q, which separates it from the event id in keys; choose a name without it", c.Name, table.KeySeparator))
	}
	if c.Table == "" {
		errs = append(errs, errors.New("idempotency table is required (Config.Table)"))
	}
	if c.Retention < 0 {
		errs = append(errs, fmt.Errorf("retention %v is negative", c.Retention))
	}
	return errors.Join(errs...)
}
