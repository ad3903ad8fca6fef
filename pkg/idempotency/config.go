package idempotency

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/onceflow/onceflow/pkg/internal/engine"
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

// Config configures a Consumer or, inside lease.Config, a lease.Consumer. Name and Table are
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
	// StorePayload also stores the message (port.Delivery.Body, or else the event encoded as a
	// CloudEvents JSON body) in the record, for audits and replays.
	StorePayload bool
	// AfterDeadLetter is what happens to the later events of a group (port.Delivery.Group)
	// once one of its messages was dead-lettered: GoOn (the default) or HoldGroup.
	AfterDeadLetter GroupPolicy
	Retry           Retry
	// Redecisions bounds how many times an event is decided again when an item its handler
	// read (Read) changed before the commit. Default 3; negative: none. Past the bound the
	// message fails and is delivered again, never counted as its own failure. The lease mode
	// reads nothing through the engine and ignores it.
	Redecisions int
	Logger      *slog.Logger     // default slog.Default()
	Metrics     metrics.Recorder // default metrics.Discard
	Now         func() time.Time // default time.Now
}

// Validate reports every problem with c.
func (c Config) Validate() error { return c.engine().Validate() }

// engine is c as the engine takes it.
func (c Config) engine() engine.Config {
	return engine.Config{Name: c.Name, Table: c.Table, Retention: c.Retention, CacheSize: c.CacheSize, StorePayload: c.StorePayload,
		AfterDeadLetter: engine.GroupPolicy(c.AfterDeadLetter), Retry: engine.Retry(c.Retry), Redecisions: c.Redecisions, Logger: c.Logger, Metrics: c.Metrics, Now: c.Now}
}

// Retry is the backoff for transient commit failures: full jitter, exponential from BaseDelay
// up to MaxDelay, at most MaxAttempts attempts, and never past the context's deadline less
// Margin (so the message can still be reported failed in time).
type Retry struct {
	MaxAttempts int           // default 8
	BaseDelay   time.Duration // default 25ms
	MaxDelay    time.Duration // default 1s
	Margin      time.Duration // default 500ms
}

// GroupPolicy says what a Consumer does with the later events of a group (an SQS FIFO message
// group, port.Delivery.Group) after one of the group's messages was dead-lettered.
type GroupPolicy uint8

const (
	// GoOn applies the later events of the group as they come: the dead-lettered one is
	// applied, if ever, out of order when it is redriven. The default. Right for events
	// whose effects commute (a note's tags).
	GoOn GroupPolicy = iota
	// HoldGroup keeps the group's order through a dead letter: the dead-lettered message
	// holds its group, every later message of the group fails permanently (ErrHeld, naming
	// the head of the hold) and is dead-lettered after it, in order, and the messages of the
	// hold's list are applied only in their order (a redrive of the dead-letter queue), or
	// discarded or skipped by an operator (package operator). Right for events whose order
	// matters (a balance's movements).
	HoldGroup
)
