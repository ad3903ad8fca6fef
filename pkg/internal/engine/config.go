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

// DB is the part of the DynamoDB API the engine uses; *dynamodb.Client implements it.
// Implementations must be safe for concurrent use. The Consumer passes each call an option
// that makes it a single attempt (the client's retryer replaced by aws.NopRetryer for that
// call): its own Retry, bounded by the deadline, is then the only retry around commits. A
// wrapper must pass the options on to the client.
type DB interface {
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// DefaultRetention is how long a record is kept by default: 30 days. A record must outlive
// every way the same event can be delivered again. On SQS that is the source queue's retention
// (at most 14 days), plus the time the message may wait in a dead-letter queue (moving it there
// resets its enqueue time), plus the source queue's retention again after a redrive. Size
// Retention from your queues' settings; 30 days covers 4-day queues with a 14-day dead-letter
// queue (4 + 14 + 4 = 22 days) with room to spare.
const DefaultRetention = 30 * 24 * time.Hour

// Config configures a Consumer or, inside LeaseConfig, a LeasedConsumer. Name and Table are
// required; the zero value of every other field means its default.
type Config struct {
	Name  string // consumer name, part of every key: two consumers of one event each apply it once
	Table string // idempotency table: hash key pk (S), TTL on expiresAt

	// Retention is how long a record keeps a redelivery a duplicate. Default DefaultRetention.
	// An event delivered again after its record expired is applied again.
	Retention time.Duration
	// CacheSize bounds the in-memory cache of keys committed by this environment. Default
	// 1024; negative disables it.
	CacheSize int
	// StorePayload also stores the message (Delivery.Body, or else the event encoded as a
	// CloudEvents JSON body) in the record, for audits and replays.
	StorePayload bool
	// AfterDeadLetter is what happens to the later events of a group (Delivery.Group) once
	// one of its messages was dead-lettered: GoOn (the default) or HoldGroup.
	AfterDeadLetter GroupPolicy
	Retry           Retry
	Logger          *slog.Logger     // default slog.Default()
	Metrics         metrics.Recorder // default metrics.Discard
	Now             func() time.Time // default time.Now
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
